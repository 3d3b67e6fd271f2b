// Clients for the console: enrolled credentials and Web MCP (OAuth) clients with their grants (clients:read),
// and revoking them (clients:revoke). A revocation is recorded in the audit log with who did it.
import { Hono } from "hono";
import type { EnrolledClient, WebClient } from "../../protocol/console-api.js";
import type { AuditLog } from "../audit/store.js";
import type { ClientView, EnrollmentService } from "../enrollment/service.js";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { problem } from "../http/problem.js";
import type { OAuthClientView, OAuthStore } from "../oauth/store.js";

export interface ClientRoutesDeps {
  enrollment: EnrollmentService;
  oauth?: OAuthStore | undefined;
  audit?: AuditLog | undefined;
  now: () => Date;
}

const ID = /^[\w-]{1,128}$/;

/** The credential id a Web MCP client's calls carry in the audit log. */
const oauthCredential = (clientId: string) => `oauth:${clientId}`;

function webClient(view: OAuthClientView, lastUsed: string | null): WebClient {
  return {
    client_id: view.client_id,
    client_name: view.client_name,
    redirect_uris: view.redirect_uris,
    created_at: view.created_at,
    revoked_at: view.revoked_at,
    last_used_at: lastUsed,
    grants: view.grants.map((grant) => ({
      id: grant.id,
      scopes: grant.scopes,
      resource: grant.resource,
      created_at: grant.created_at,
      expires_at: grant.expires_at,
      revoked_at: grant.revoked_at,
      last_refreshed_at: grant.last_refreshed_at,
    })),
  };
}

export function createClientRoutes(deps: ClientRoutesDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  // Written before the answer: a revocation is acknowledged only once its record is durable.
  const revoked = async (
    c: { get(key: "client"): { id: string; name: string } },
    target: "client" | "oauth_client" | "grant",
    id: string,
  ) => {
    const actor = c.get("client");
    await deps.audit?.record({
      kind: "client_revoked",
      actor: `${actor.name} (${actor.id})`,
      detail: { target, id, actor_id: actor.id },
    });
  };

  /** Each credential's last tool call: one query, an index probe per credential (empty without an audit log). */
  const lastUsed = async (credentialIds: string[]) =>
    (await deps.audit?.lastUsed(credentialIds)) ?? new Map<string, string | null>();
  const enrolledClient = async (client: ClientView): Promise<EnrolledClient> => ({
    ...client,
    last_used_at: (await lastUsed([client.id])).get(client.id) ?? null,
  });
  const webClientOf = async (view: OAuthClientView): Promise<WebClient> =>
    webClient(
      view,
      (await lastUsed([oauthCredential(view.client_id)])).get(oauthCredential(view.client_id)) ?? null,
    );

  app.get("/clients", requireScope("clients:read"), async (c) => {
    const listed = await deps.enrollment.listClients();
    const used = await lastUsed(listed.map((client) => client.id));
    const clients: EnrolledClient[] = listed.map((client) => ({
      ...client,
      last_used_at: used.get(client.id) ?? null,
    }));
    return c.json({ clients });
  });

  app.post("/clients/:id/revoke", requireScope("clients:revoke"), async (c) => {
    const id = c.req.param("id");
    if (!ID.test(id)) return problem(c, 400, "invalid_request", "invalid client id");
    // An unknown id is NOT_FOUND: the app's error map answers 404.
    const client = await enrolledClient(await deps.enrollment.revokeClient(id));
    await revoked(c, "client", id);
    return c.json(client);
  });

  app.get("/oauth-clients", requireScope("clients:read"), async (c) => {
    const listed = (await deps.oauth?.listClients()) ?? [];
    const used = await lastUsed(listed.map((client) => oauthCredential(client.client_id)));
    return c.json({
      clients: listed.map((view) => webClient(view, used.get(oauthCredential(view.client_id)) ?? null)),
    });
  });

  app.post("/oauth-clients/:id/revoke", requireScope("clients:revoke"), async (c) => {
    const id = c.req.param("id");
    if (!ID.test(id)) return problem(c, 400, "invalid_request", "invalid client id");
    const view = await deps.oauth?.revokeClient(id, deps.now().toISOString());
    if (!view) return problem(c, 404, "not_found", `no OAuth client with id ${id}`);
    await revoked(c, "oauth_client", id);
    return c.json(await webClientOf(view));
  });

  // Answers the grant's client, as the client list shows it, so the console can replace that row.
  app.post("/grants/:id/revoke", requireScope("clients:revoke"), async (c) => {
    const id = c.req.param("id");
    if (!ID.test(id)) return problem(c, 400, "invalid_request", "invalid grant id");
    const grant = await deps.oauth?.revokeGrant(id, deps.now().toISOString());
    if (!grant) return problem(c, 404, "not_found", `no grant with id ${id}`);
    await revoked(c, "grant", id);
    const owner = (await deps.oauth?.listClients())?.find((client) => client.client_id === grant.client_id);
    return c.json(owner ? await webClientOf(owner) : grant);
  });
  return app;
}
