// Clients: enrolled credentials and Web MCP (OAuth) clients with their grants; revoke with an in-page confirmation.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { DataTable, QueryState, useTitle, When } from "../common.js";
import { ConfirmRevoke, DoneNotice } from "../confirm.js";
import { useApi, useCan } from "../context.js";
import type { EnrolledClient, WebClient } from "../types.js";
import "./admin.css";

interface RevokeTarget {
  /** What the confirmation names ("client laptop", "grant gr_…"). */
  what: string;
  path: string;
}

export function ClientsView() {
  useTitle("Clients");
  const api = useApi();
  const canRevoke = useCan("clients:revoke");
  const queryClient = useQueryClient();
  const [pending, setPending] = useState<RevokeTarget | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  /** The Revoke button that opened the confirmation: Cancel returns focus to it. */
  const openerRef = useRef<HTMLElement | null>(null);
  const enrolled = useQuery({
    queryKey: ["clients"],
    queryFn: () => api.get<{ clients: EnrolledClient[] }>("/v1/admin/clients"),
  });
  const web = useQuery({
    queryKey: ["oauth-clients"],
    queryFn: () => api.get<{ clients: WebClient[] }>("/v1/admin/oauth-clients"),
  });
  const revoke = useMutation({
    mutationFn: (target: RevokeTarget) => api.post<unknown>(target.path),
    onSuccess: (_result, target) => {
      setPending(null);
      setDone(`Revoked ${target.what}. Its next request will be refused.`);
      void queryClient.invalidateQueries({ queryKey: ["clients"] });
      void queryClient.invalidateQueries({ queryKey: ["oauth-clients"] });
      void queryClient.invalidateQueries({ queryKey: ["overview"] });
      // The confirmation and the row's button are gone: focus goes to the list's heading, not to <body>.
      headingRef.current?.focus();
    },
  });
  const enrolledNames = nameCounts((enrolled.data?.clients ?? []).map((client) => client.name));
  const webNames = nameCounts((web.data?.clients ?? []).map((client) => client.client_name));
  const ask = (target: RevokeTarget) => {
    openerRef.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    revoke.reset();
    setDone(null);
    setPending(target);
  };
  const revokeButton = (label: string, target: RevokeTarget, revoked: string | null) =>
    revoked ? (
      <span className="muted">
        revoked <When iso={revoked} />
      </span>
    ) : (
      <button
        type="button"
        className="danger"
        disabled={!canRevoke}
        title={canRevoke ? undefined : "Your role cannot revoke clients"}
        onClick={() => ask(target)}
      >
        {label}
      </button>
    );

  return (
    <>
      <h1 ref={headingRef} tabIndex={-1}>
        Clients
      </h1>
      {!canRevoke && <p className="muted">Your role can see clients but not revoke them.</p>}
      {pending && (
        <ConfirmRevoke
          key={pending.path}
          disabled={revoke.isPending || !canRevoke}
          error={revoke.error}
          onConfirm={() => revoke.mutate(pending)}
          onCancel={() => {
            setPending(null);
            const opener = openerRef.current;
            (opener?.isConnected ? opener : headingRef.current)?.focus();
          }}
        >
          Revoke {pending.what}? It loses access at once and its next request is refused. This cannot be
          undone.
        </ConfirmRevoke>
      )}
      <DoneNotice message={done} />
      <QueryState query={enrolled} label="enrolled clients">
        {() => (
          <DataTable
            caption="Enrolled clients"
            columns={["Name", "ID", "Scopes", "Enrolled", "Last used", "Action"]}
            empty="No enrolled clients."
            rows={(enrolled.data?.clients ?? []).map((client) => {
              const name = clientLabel(client.name, client.id, enrolledNames);
              return (
                <tr key={client.id}>
                  <th scope="row">{client.name}</th>
                  <td className="mono">{client.id}</td>
                  <td className="mono">{client.scopes.join(" ")}</td>
                  <td>
                    <When iso={client.created_at} />
                  </td>
                  <td>
                    <When iso={client.last_used_at} />
                  </td>
                  <td>
                    {revokeButton(
                      `Revoke ${name}`,
                      {
                        what: `client ${name}`,
                        path: `/v1/admin/clients/${encodeURIComponent(client.id)}/revoke`,
                      },
                      client.revoked_at,
                    )}
                  </td>
                </tr>
              );
            })}
          />
        )}
      </QueryState>
      <QueryState query={web} label="web clients">
        {() => (
          <DataTable
            caption="Web clients"
            columns={["Name", "Client ID", "Redirect URIs", "Registered", "Last used", "Grants", "Action"]}
            empty="No web clients registered."
            rows={(web.data?.clients ?? []).map((client) => {
              const name = clientLabel(client.client_name, client.client_id, webNames);
              return (
                <tr key={client.client_id}>
                  <th scope="row">{client.client_name ?? <span className="muted">(no name)</span>}</th>
                  <td className="mono">{client.client_id}</td>
                  <td className="mono">
                    <ul className="plain">
                      {client.redirect_uris.map((uri) => (
                        <li key={uri}>{uri}</li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <When iso={client.created_at} />
                  </td>
                  <td>
                    <When iso={client.last_used_at} />
                  </td>
                  <td>
                    {client.grants.length === 0 ? (
                      <span className="muted">none</span>
                    ) : (
                      <ul className="plain grants">
                        {client.grants.map((grant) => (
                          <li key={grant.id}>
                            <span className="mono">{grant.id}</span>: {grant.scopes.join(" ")} · expires{" "}
                            <When iso={grant.expires_at} />{" "}
                            {revokeButton(
                              `Revoke grant ${grant.id}`,
                              {
                                what: `grant ${grant.id}`,
                                path: `/v1/admin/grants/${encodeURIComponent(grant.id)}/revoke`,
                              },
                              grant.revoked_at,
                            )}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td>
                    {revokeButton(
                      `Revoke ${name}`,
                      {
                        what: `web client ${name}`,
                        path: `/v1/admin/oauth-clients/${encodeURIComponent(client.client_id)}/revoke`,
                      },
                      client.revoked_at,
                    )}
                  </td>
                </tr>
              );
            })}
          />
        )}
      </QueryState>
    </>
  );
}

function nameCounts(names: (string | null)[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of names) if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/** A client's name, or its id when it has none; the id is added when several clients share the name. */
export function clientLabel(name: string | null, id: string, counts: Map<string, number>): string {
  if (!name) return id;
  return (counts.get(name) ?? 0) > 1 ? `${name} (${id})` : name;
}
