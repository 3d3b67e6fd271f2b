// `ivoai server init`
import { initServer } from "../../server/init.js";
import { defineCommand } from "../command.js";
import { ROOT_OPTION, rootOf } from "./server-common.js";

export const serverInitCommand = defineCommand({
  name: "init",
  summary: "Create the server's configuration and data tree (idempotent)",
  description:
    "Creates etc/ivoai (config), etc/ivoai/secrets (0700), var/lib/ivoai/… and run/ivoai under the root.\n" +
    "Existing modes are only ever tightened; symlinked or foreign-owned directories are refused.\n" +
    "Plaintext listeners must be loopback or sit behind a trusted reverse proxy; others need TLS.",
  json: true,
  options: {
    ...ROOT_OPTION,
    "public-url": {
      type: "string",
      value: "URL",
      description: "public origin clients use (https, or http on loopback)",
    },
    listen: {
      type: "string",
      value: "HOST:PORT",
      description: "listen address (default 127.0.0.1:8787; port 0 = any)",
    },
    "trusted-proxy": {
      type: "string",
      value: "CIDR",
      multiple: true,
      description: "source range of a TLS-terminating reverse proxy",
    },
    "tls-cert": {
      type: "string",
      value: "FILE",
      description: "PEM certificate to serve TLS directly (copied 0600)",
    },
    "tls-key": { type: "string", value: "FILE", description: "PEM private key for --tls-cert (copied 0600)" },
  },
  async run(ctx) {
    const report = await initServer({
      root: rootOf(ctx),
      ...optional("publicUrl", ctx.options["public-url"]),
      ...optional("listen", ctx.options.listen),
      trustedProxyCidrs: ctx.options["trusted-proxy"],
      ...optional("tlsCertFile", ctx.options["tls-cert"]),
      ...optional("tlsKeyFile", ctx.options["tls-key"]),
    });
    ctx.out.data(report, (r) =>
      [
        `server tree ready under ${r.root}`,
        `  config:   ${r.config_file}${r.config_written ? " (written)" : " (unchanged)"}`,
        `  public:   ${r.public_url}`,
        `  listener: ${r.listener}`,
        `  created:  ${r.created.length}, tightened: ${r.tightened.length}`,
      ].join("\n"),
    );
    return 0;
  },
});

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
