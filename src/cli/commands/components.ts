// `ivoai components`: the reviewed component manifest (manifest/components.json, compiled in) and what this
// machine has of each entry.
import { listComponents } from "../../client/components/component-list.js";
import { clientPaths } from "../../config/client-paths.js";
import { defineCommand } from "../command.js";
import { formatTable } from "../output.js";

export const componentsCommand = defineCommand({
  name: "components",
  summary:
    "List the components ivoai manages or uses: version, integrity, install method, purpose, here or not",
  description:
    "From the reviewed manifest compiled into ivoai (manifest/components.json in its repository). Components\n" +
    "that cannot be installed on this platform stay listed with the reason.",
  json: true,
  async run(ctx) {
    const components = await listComponents(clientPaths(ctx.env), ctx.env);
    ctx.out.data(components, (rows) =>
      [
        formatTable(
          ["COMPONENT", "KIND", "VERSION", "METHOD", "INTEGRITY", "INSTALLED", "PURPOSE"],
          rows.map((c) => [
            c.name,
            c.kind,
            c.version ?? "not pinned",
            c.method,
            c.integrity ? `${c.integrity.slice(0, 19)}…` : "-",
            c.unsupported_here ? "unsupported" : c.installed,
            c.purpose,
          ]),
        ),
        ...rows.flatMap((c) => [
          ...(c.unsupported_here ? [`${c.name}: unsupported here: ${c.unsupported_here}`] : []),
          ...(c.note ? [`${c.name}: ${c.note}`] : []),
        ]),
      ].join("\n"),
    );
    return 0;
  },
});
