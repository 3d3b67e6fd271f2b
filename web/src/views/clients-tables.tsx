// The two tables of the Clients view (enrolled credentials, Web MCP clients with their grants) and the Revoke
// button they share; the view owns the confirmation, these only ask for it.
import { DataTable, When } from "../common.js";
import type { EnrolledClient, WebClient } from "../types.js";

export interface RevokeTarget {
  /** What the confirmation names ("client laptop", "grant gr_…"). */
  what: string;
  path: string;
}

/** What a table needs to offer revocation: whether the role may, and how to ask for the confirmation. */
export interface RevokeActions {
  canRevoke: boolean;
  ask(target: RevokeTarget): void;
}

function RevokeButton(props: {
  label: string;
  target: RevokeTarget;
  revoked: string | null;
  actions: RevokeActions;
}) {
  const { label, target, revoked, actions } = props;
  if (revoked) {
    return (
      <span className="muted">
        revoked <When iso={revoked} />
      </span>
    );
  }
  return (
    <button
      type="button"
      className="danger"
      disabled={!actions.canRevoke}
      title={actions.canRevoke ? undefined : "Your role cannot revoke clients"}
      onClick={() => actions.ask(target)}
    >
      {label}
    </button>
  );
}

export function EnrolledClientsTable(props: { clients: EnrolledClient[]; actions: RevokeActions }) {
  const names = nameCounts(props.clients.map((client) => client.name));
  return (
    <DataTable
      caption="Enrolled clients"
      columns={["Name", "ID", "Scopes", "Enrolled", "Last used", "Action"]}
      empty="No enrolled clients."
      rows={props.clients.map((client) => {
        const name = clientLabel(client.name, client.id, names);
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
              <RevokeButton
                label={`Revoke ${name}`}
                target={{
                  what: `client ${name}`,
                  path: `/v1/admin/clients/${encodeURIComponent(client.id)}/revoke`,
                }}
                revoked={client.revoked_at}
                actions={props.actions}
              />
            </td>
          </tr>
        );
      })}
    />
  );
}

export function WebClientsTable(props: { clients: WebClient[]; actions: RevokeActions }) {
  const names = nameCounts(props.clients.map((client) => client.client_name));
  return (
    <DataTable
      caption="Web clients"
      columns={["Name", "Client ID", "Redirect URIs", "Registered", "Last used", "Grants", "Action"]}
      empty="No web clients registered."
      rows={props.clients.map((client) => (
        <WebClientRow
          key={client.client_id}
          client={client}
          name={clientLabel(client.client_name, client.client_id, names)}
          actions={props.actions}
        />
      ))}
    />
  );
}

function WebClientRow(props: { client: WebClient; name: string; actions: RevokeActions }) {
  const { client, name, actions } = props;
  return (
    <tr>
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
        <GrantList grants={client.grants} actions={actions} />
      </td>
      <td>
        <RevokeButton
          label={`Revoke ${name}`}
          target={{
            what: `web client ${name}`,
            path: `/v1/admin/oauth-clients/${encodeURIComponent(client.client_id)}/revoke`,
          }}
          revoked={client.revoked_at}
          actions={actions}
        />
      </td>
    </tr>
  );
}

function GrantList(props: { grants: WebClient["grants"]; actions: RevokeActions }) {
  if (props.grants.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="plain grants">
      {props.grants.map((grant) => (
        <li key={grant.id}>
          <span className="mono">{grant.id}</span>: {grant.scopes.join(" ")} · expires{" "}
          <When iso={grant.expires_at} />{" "}
          <RevokeButton
            label={`Revoke grant ${grant.id}`}
            target={{
              what: `grant ${grant.id}`,
              path: `/v1/admin/grants/${encodeURIComponent(grant.id)}/revoke`,
            }}
            revoked={grant.revoked_at}
            actions={props.actions}
          />
        </li>
      ))}
    </ul>
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
