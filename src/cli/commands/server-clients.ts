// `ivoai server clients list|revoke`
import type { ClientView } from "../../server/enrollment/service.js";
import type { CommandSpec, GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { ROOT_OPTION, withEnrollment } from "./server-common.js";

const listCommand: CommandSpec = {
  kind: "command",
  name: "list",
  summary: "List enrolled clients (credentials are never shown)",
  json: true,
  options: ROOT_OPTION,
  async run(ctx) {
    const clients = await withEnrollment(ctx, (service) => service.listClients());
    ctx.out.data(clients, (rows) =>
      formatTable(
        ["ID", "NAME", "STATUS", "CREATED", "SCOPES"],
        rows.map((row: ClientView) => [
          row.id,
          row.name,
          row.revoked_at ? "revoked" : "active",
          row.created_at,
          row.scopes.join(" "),
        ]),
      ),
    );
    return 0;
  },
};

const revokeCommand: CommandSpec = {
  kind: "command",
  name: "revoke",
  summary: "Revoke a client's credential (effective on its next request)",
  json: true,
  positionals: [{ name: "ID", description: "client id (from 'clients list')", required: true }],
  options: ROOT_OPTION,
  async run(ctx) {
    const id = ctx.positionals[0] ?? "";
    const view = await withEnrollment(ctx, (service) => service.revokeClient(id));
    ctx.out.data(view, (v) => `client ${v.id}: revoked at ${v.revoked_at}`);
    return 0;
  },
};

export const serverClientsGroup: GroupSpec = {
  kind: "group",
  name: "clients",
  summary: "Manage enrolled clients",
  children: [listCommand, revokeCommand],
};
