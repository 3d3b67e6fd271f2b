// `ivoai demo`: the main job on embedded defaults — a server under a temp root, an enrolled client, discovery.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { serverPaths } from "../../config/server-paths.js";
import { createEnrollmentService } from "../../server/enrollment/service.js";
import { createEnrollmentStore } from "../../server/enrollment/store.js";
import { initServer } from "../../server/init.js";
import { startGateway } from "../../server/start.js";
import { IvoaiError } from "../../shared/errors.js";
import { createLogger, silentLogger } from "../../shared/logger.js";
import type { CommandSpec } from "../command.js";

export const demoCommand: CommandSpec = {
  kind: "command",
  name: "demo",
  summary: "Run a throw-away server under a temp root, enroll a client and show what it serves",
  description:
    "Initialises a server tree in a temporary folder, starts the gateway on 127.0.0.1 (any free port),\n" +
    "creates a single-use enrollment code, exchanges it for a credential (kept in memory, never printed),\n" +
    "calls an authenticated admin endpoint and prints the discovery document. Removes the tree at the end\n" +
    "unless --keep.",
  json: true,
  options: {
    keep: { type: "boolean", description: "keep the temporary server tree and print its path" },
    verbose: { type: "boolean", description: "show the gateway's JSON logs on stderr" },
  },
  async run(ctx) {
    const root = await mkdtemp(path.join(tmpdir(), "ivoai-demo-"));
    const logger = ctx.options.verbose ? createLogger() : silentLogger;
    try {
      ctx.out.note(`[1/4] initialising a server tree under ${root}`);
      await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
      const gateway = await startGateway({ root, logger });
      try {
        ctx.out.note(`[2/4] gateway listening on ${gateway.url}`);
        const paths = serverPaths(root);
        const store = createEnrollmentStore({
          statePath: paths.enrollmentState,
          lockPath: paths.enrollmentLock,
        });
        const { code } = await createEnrollmentService({ store })
          .createCode({ ttlMs: 600_000 })
          .finally(() => store.close());
        ctx.out.note("[3/4] enrolling a client with a single-use code");
        const enrolled = await getJson<{ client_id: string; credential: string; scopes: string[] }>(
          `${gateway.url}/v1/enroll`,
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ code, client_name: "demo" }),
          },
        );
        const status = await getJson<Record<string, unknown>>(`${gateway.url}/v1/admin/status`, {
          headers: { authorization: `Bearer ${enrolled.credential}` },
        });
        ctx.out.note(`[4/4] client ${enrolled.client_id} enrolled with scopes: ${enrolled.scopes.join(" ")}`);
        const discovery = await getJson<Record<string, unknown>>(`${gateway.url}/.well-known/ivoai`, {});
        ctx.out.data(
          {
            root: ctx.options.keep ? root : null,
            url: gateway.url,
            client_id: enrolled.client_id,
            status,
            discovery,
          },
          (value) =>
            `discovery document (${value.url}/.well-known/ivoai):\n${JSON.stringify(value.discovery, null, 2)}`,
        );
      } finally {
        await gateway.close();
      }
    } finally {
      if (ctx.options.keep) ctx.out.note(`kept the server tree at ${root}`);
      else await rm(root, { recursive: true, force: true });
    }
    return 0;
  },
};

async function getJson<T>(url: string, init: RequestInit): Promise<T> {
  const response = await fetch(url, { ...init, redirect: "error", signal: AbortSignal.timeout(10_000) });
  if (!response.ok) {
    throw new IvoaiError(
      "NETWORK",
      `${init.method ?? "GET"} ${new URL(url).pathname} answered ${response.status}`,
    );
  }
  return (await response.json()) as T;
}
