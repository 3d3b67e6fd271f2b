// `ivoai server clients list|revoke`: enrolled clients (bearer credentials) and Web MCP OAuth clients with their
// grants. Only metadata is shown: never a credential, a token or a hash.
import type { ClientView } from "../../server/enrollment/service.js";
import type { GrantView, OAuthClientView } from "../../server/oauth/store.js";
import { IvoaiError } from "../../shared/errors.js";
import { defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { ROOT_OPTION, withEnrollment, withOAuthStore } from "./server-common.js";

type GrantStatus = "active" | "expired" | "revoked";

/** A grant as listed: its metadata and whether it still works. */
export interface GrantEntry extends GrantView {
  status: GrantStatus;
}

/** A Web MCP client as listed, beside the enrolled ones (same id, name, status, created_at and scopes fields). */
export interface OAuthClientEntry {
  kind: "oauth";
  id: string;
  name: string;
  status: "active" | "revoked";
  created_at: string;
  revoked_at: string | null;
  /** Scopes of the grants that still work. */
  scopes: string[];
  redirect_uris: string[];
  grants: GrantEntry[];
}

type ListEntry = (ClientView & { kind: "credential"; status: "active" | "revoked" }) | OAuthClientEntry;

/** Runs `use` on the OAuth store, or returns `absent` when the server never created one. */
function grantEntry(grant: GrantView, at: string): GrantEntry {
  const status: GrantStatus = grant.revoked_at ? "revoked" : grant.expires_at <= at ? "expired" : "active";
  return { ...grant, status };
}

function oauthEntry(client: OAuthClientView, at: string): OAuthClientEntry {
  const grants = client.grants.map((grant) => grantEntry(grant, at));
  const live = grants.filter((grant) => grant.status === "active");
  return {
    kind: "oauth",
    id: client.client_id,
    name: client.client_name ?? client.client_id,
    status: client.revoked_at ? "revoked" : "active",
    created_at: client.created_at,
    revoked_at: client.revoked_at,
    scopes: [...new Set(live.flatMap((grant) => grant.scopes))],
    redirect_uris: client.redirect_uris,
    grants,
  };
}

function renderList(entries: readonly ListEntry[]): string {
  const credentials = entries.filter((entry) => entry.kind === "credential");
  const oauth = entries.filter((entry): entry is OAuthClientEntry => entry.kind === "oauth");
  const text = [
    formatTable(
      ["ID", "NAME", "STATUS", "CREATED", "SCOPES"],
      credentials.map((row) => [row.id, row.name, row.status, row.created_at, row.scopes.join(" ")]),
    ),
  ];
  if (oauth.length === 0) return text.join("\n");
  text.push(
    "",
    "Web MCP (OAuth) clients:",
    formatTable(
      ["ID", "NAME", "STATUS", "CREATED", "GRANTS", "REDIRECT URIS"],
      oauth.map((row) => [
        row.id,
        row.name,
        row.status,
        row.created_at,
        String(row.grants.filter((grant) => grant.status === "active").length),
        row.redirect_uris.join(" "),
      ]),
    ),
    "",
    "Web MCP grants:",
    formatTable(
      ["ID", "CLIENT", "STATUS", "CREATED", "EXPIRES", "LAST REFRESH", "SCOPES"],
      oauth.flatMap((row) =>
        row.grants.map((grant) => [
          grant.id,
          row.id,
          grant.status,
          grant.created_at,
          grant.expires_at,
          grant.last_refreshed_at ?? "-",
          grant.scopes.join(" "),
        ]),
      ),
    ),
  );
  return text.join("\n");
}

const listCommand = defineCommand({
  name: "list",
  summary:
    "List enrolled clients and Web MCP (OAuth) clients with their grants (no credential or token is shown)",
  json: true,
  options: ROOT_OPTION,
  async run(ctx) {
    const at = new Date().toISOString();
    const enrolled = await withEnrollment(ctx, (service) => service.listClients());
    const oauth = await withOAuthStore(ctx, [], (store) => store.listClients());
    const entries: ListEntry[] = [
      ...enrolled.map((row) => ({
        kind: "credential" as const,
        ...row,
        status: row.revoked_at ? ("revoked" as const) : ("active" as const),
      })),
      ...oauth.map((client) => oauthEntry(client, at)),
    ];
    ctx.out.data({ clients: entries }, ({ clients }) => renderList(clients));
    return 0;
  },
});

const revokeCommand = defineCommand({
  name: "revoke",
  summary:
    "Revoke an enrolled client, a Web MCP client (all its grants) or one grant (effective on the next request)",
  json: true,
  positionals: [
    {
      name: "ID",
      description:
        "a client id (cli_…), a Web MCP client id (oc_…) or a grant id (fam_…), from 'clients list'",
      required: true,
    },
  ],
  options: ROOT_OPTION,
  async run(ctx) {
    const id = ctx.positionals[0] ?? "";
    const at = new Date().toISOString();
    if (id.startsWith("oc_")) {
      const client = await withOAuthStore(ctx, undefined, (store) => store.revokeClient(id, at));
      if (!client) throw new IvoaiError("NOT_FOUND", `no Web MCP client with id ${id}`);
      ctx.out.data(
        oauthEntry(client, at),
        (v) => `Web MCP client ${v.id}: revoked at ${v.revoked_at} with its ${v.grants.length} grant(s)`,
      );
      return 0;
    }
    if (id.startsWith("fam_")) {
      const grant = await withOAuthStore(ctx, undefined, (store) => store.revokeGrant(id, at));
      if (!grant) throw new IvoaiError("NOT_FOUND", `no Web MCP grant with id ${id}`);
      ctx.out.data(
        { kind: "grant" as const, ...grantEntry(grant, at) },
        (v) => `grant ${v.id} of ${v.client_id}: revoked at ${v.revoked_at}`,
      );
      return 0;
    }
    const view = await withEnrollment(ctx, (service) => service.revokeClient(id));
    ctx.out.data(view, (v) => `client ${v.id}: revoked at ${v.revoked_at}`);
    return 0;
  },
});

export const serverClientsGroup: GroupSpec = {
  kind: "group",
  name: "clients",
  summary: "Manage enrolled clients and Web MCP (OAuth) clients and grants",
  children: [listCommand, revokeCommand],
};
