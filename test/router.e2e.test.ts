// Seed 001 with three real servers (two replicas of one purpose, one other purpose): connections, doctor,
// the session router's fan-out, failover and failures, write routing, redirects and size limits.
import { type ChildProcess, spawn } from "node:child_process";
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTree } from "./context-helpers.js";
import { type FakeServer, startFakeIvoai } from "./fixtures/fake-ivoai.js";
import {
  BIN,
  createCode,
  initWithDocs,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { rawPost } from "./raw-http.js";

interface Router {
  endpoints: { context: string; memory: string; hooks: string };
  capability: string;
  read_only_capability: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

type Federation = {
  federation: {
    partial: boolean;
    sources: { alias: string; status: string; failed_over_from?: string[] }[];
    items: { path: string; _source: { alias: string; purpose: string } }[];
  };
};

describe("multi-server knowledge (seed 001)", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const servers: Record<string, { root: string; server: RunningServer }> = {};
  let env: NodeJS.ProcessEnv;
  const ivoai = (args: string[], input?: string) =>
    runIvoai(args, { env, ...(input !== undefined ? { input } : {}) });

  const startRouter = (args: string[] = []): Promise<Router> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, "router", "serve", "--json", ...args], {
        env: { ...process.env, ...env },
      });
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      const exited = new Promise<void>((done) => child.on("exit", () => done()));
      createInterface({ input: child.stdout }).once("line", (line) => {
        const ready = JSON.parse(line) as Omit<Router, "child" | "stop">;
        const stop = async () => {
          child.kill("SIGTERM");
          await exited;
        };
        resolve({ ...ready, child, stop });
      });
      void exited.then(() => reject(new Error(`router exited: ${stderr}`)));
    });

  const client = async (url: string, capability: string) => {
    const mcp = new Client({ name: "agent", version: "1" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${capability}` } },
      }),
    );
    return mcp;
  };
  const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;
  // Programs read the federation object; the text item is for a model, never raw JSON.
  const federation = (result: unknown) => {
    expect(() => JSON.parse(textOf(result))).toThrow();
    return (result as CallToolResult).structuredContent as Federation;
  };

  beforeAll(async () => {
    const xdg = await tempDir("ivoai-client-");
    cleanups.push(xdg.cleanup);
    env = {
      XDG_CONFIG_HOME: path.join(xdg.dir, "config"),
      XDG_STATE_HOME: path.join(xdg.dir, "state"),
      XDG_DATA_HOME: path.join(xdg.dir, "data"),
      HOME: xdg.dir,
    };
    for (const name of ["acme-1", "acme-2", "mindsite"]) {
      const made = await tempDir();
      const docs = await tempDir("ivoai-docs-");
      cleanups.push(made.cleanup, docs.cleanup);
      await writeTree(docs.dir, {
        "deploy.md": `# Deploy (${name})\n\nOn ${name} we deploy with the wombat pipeline.`,
      });
      await initWithDocs(made.dir, docs.dir);
      servers[name] = { root: made.dir, server: await startServer(made.dir) };
    }
    const add = async (alias: string, extra: string[]) => {
      const { root, server } = servers[alias] as { root: string; server: RunningServer };
      const { code } = await createCode(root);
      const result = await ivoai(
        ["connect", "server", "add", alias, "--url", server.url, ...extra, "--code-stdin"],
        `${code}\n`,
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout + result.stderr).not.toContain(code);
    };
    await add("acme-1", ["--purpose", "acme", "--redundancy-group", "acme-prod", "--priority", "10"]);
    await add("acme-2", ["--purpose", "acme", "--redundancy-group", "acme-prod", "--priority", "20"]);
    await add("mindsite", ["--purpose", "mindsite"]);
  });
  afterAll(async () => {
    for (const { server } of Object.values(servers)) {
      server.child.kill("SIGCONT");
      if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    }
    for (const cleanup of cleanups) await cleanup();
  });

  it("lists, shows, tests and doctors the connections without ever showing a credential", async () => {
    const list = (
      JSON.parse((await ivoai(["connect", "server", "list", "--json"])).stdout) as {
        servers: { alias: string; purpose: string }[];
      }
    ).servers;
    expect(list.map((entry) => [entry.alias, entry.purpose])).toEqual([
      ["acme-1", "acme"],
      ["acme-2", "acme"],
      ["mindsite", "mindsite"],
    ]);
    const show = await ivoai(["connect", "server", "show", "mindsite"]);
    expect(show.stdout).toContain("purpose");
    expect((await ivoai(["connect", "server", "test", "acme-1"])).code).toBe(0);
    const doctor = await ivoai(["doctor", "--json"]);
    const report = JSON.parse(doctor.stdout) as {
      servers: { alias: string; readiness: string; protocol_version: number; credential_stored: boolean }[];
      files: { ok: boolean }[];
    };
    expect(
      report.servers.every(
        (row) => row.readiness === "ready" && row.protocol_version === 1 && row.credential_stored,
      ),
    ).toBe(true);
    expect(report.files.every((row) => row.ok)).toBe(true);

    const configDir = path.join(env.XDG_CONFIG_HOME as string, "ivoai");
    const secrets = await readFile(path.join(configDir, "secrets.json"), "utf8");
    const credentials = [...secrets.matchAll(/ivoai_cred_[A-Za-z0-9_-]+/g)].map((match) => match[0]);
    expect(credentials).toHaveLength(3);
    expect((await stat(path.join(configDir, "secrets.json"))).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    const visible = [
      await readFile(path.join(configDir, "config.toml"), "utf8"),
      show.stdout,
      doctor.stdout,
      JSON.stringify(list),
    ].join("\n");
    for (const credential of credentials) expect(visible).not.toContain(credential);
  });

  it("keeps fields it does not know when rewriting config.toml", async () => {
    const file = path.join(env.XDG_CONFIG_HOME as string, "ivoai/config.toml");
    await writeFile(file, `${await readFile(file, "utf8")}\n[ui]\ntheme = "dark"\n`);
    expect((await ivoai(["connect", "server", "disable", "mindsite"])).code).toBe(0);
    expect((await ivoai(["connect", "server", "enable", "mindsite"])).code).toBe(0);
    expect(await readFile(file, "utf8")).toContain('theme = "dark"');
  });

  it("fans reads out to every purpose with provenance, keeping identical paths apart", async () => {
    const router = await startRouter(["--deadline-ms", "3000"]);
    const mcp = await client(router.endpoints.context, router.capability);
    try {
      const result = federation(
        await mcp.callTool({ name: "context_search", arguments: { query: "wombat pipeline" } }),
      );
      expect(result.federation.partial).toBe(false);
      expect(result.federation.sources.map((source) => [source.alias, source.status])).toEqual([
        ["acme-1", "ok"],
        ["mindsite", "ok"],
      ]);
      expect(result.federation.items.map((item) => `${item._source.alias}:${item.path}`)).toEqual([
        "acme-1:deploy.md",
        "mindsite:deploy.md",
      ]);
      const tools = (await mcp.listTools()).tools;
      expect(tools.every((tool) => tool.outputSchema === undefined)).toBe(true);
    } finally {
      await mcp.close();
      await router.stop();
    }
  });

  it("passes one selected source through unchanged, and refuses a bad capability", async () => {
    const router = await startRouter(["--knowledge-source", "mindsite"]);
    try {
      const mcp = await client(router.endpoints.context, router.capability);
      const result = await mcp.callTool({ name: "context_search", arguments: { query: "wombat" } });
      expect((result.structuredContent as { status: string }).status).toBe("SUCCESS");
      expect((await mcp.listTools()).tools.some((tool) => tool.outputSchema !== undefined)).toBe(true);
      await mcp.close();
      const denied = await fetch(router.endpoints.context, {
        method: "POST",
        headers: { authorization: "Bearer nope" },
      });
      expect(denied.status).toBe(401);
    } finally {
      await router.stop();
    }
    await expect(fetch(router.endpoints.context)).rejects.toThrow();
  });

  it("fails before start when an explicitly selected source is unknown or unavailable", async () => {
    await expect(startRouter(["--knowledge-source", "nosuch"])).rejects.toThrow(/not connected/);
    servers.mindsite?.server.child.kill("SIGSTOP");
    try {
      await expect(startRouter(["--knowledge-source", "mindsite"])).rejects.toThrow(/unavailable/);
    } finally {
      servers.mindsite?.server.child.kill("SIGCONT");
    }
  });

  it("refuses a write with two possible destinations, and sends a grouped write to the primary only", async () => {
    const all = await startRouter();
    const mcp = await client(all.endpoints.memory, all.capability);
    const ambiguous = await mcp.callTool({
      name: "memory_write_page",
      arguments: { path: "notes/x", body: "hello" },
    });
    expect(ambiguous.isError).toBe(true);
    expect(textOf(ambiguous)).toMatch(/^WRITE_DESTINATION=AMBIGUOUS/);
    await mcp.close();
    await all.stop();

    const acme = await startRouter(["--knowledge-source", "acme-1,acme-2"]);
    const writer = await client(acme.endpoints.memory, acme.capability);
    const pending = await writer.callTool({
      name: "memory_write_page",
      arguments: { path: "notes/x", body: "hello" },
    });
    expect((pending.structuredContent as { status: string }).status).toBe("PENDING_HUMAN_APPROVAL");
    const pendingOn = async (name: string) =>
      (
        JSON.parse(
          (await runIvoai(["server", "approvals", "list", "--root", servers[name]?.root as string, "--json"]))
            .stdout,
        ) as { approvals: unknown[] }
      ).approvals.length;
    expect([await pendingOn("acme-1"), await pendingOn("acme-2")]).toEqual([1, 0]);
    await writer.close();
    await acme.stop();
  });

  it("passes one redundancy group's answer through as its member gave it, structured result included", async () => {
    const group = await startRouter(["--knowledge-source", "acme-prod"]);
    const direct = await startRouter(["--knowledge-source", "acme-1"]);
    const viaGroup = await client(group.endpoints.context, group.capability);
    const viaPrimary = await client(direct.endpoints.context, direct.capability);
    try {
      const call = { name: "context_search", arguments: { query: "wombat pipeline" } };
      const [grouped, own] = [await viaGroup.callTool(call), await viaPrimary.callTool(call)];
      expect(textOf(grouped)).not.toContain("federation");
      const structured = (result: unknown) =>
        (result as CallToolResult).structuredContent as {
          status: string;
          data: { results: { path: string }[] };
        };
      expect(structured(grouped).status).toBe("SUCCESS");
      expect(structured(grouped).data).toEqual(structured(own).data);
      expect(structured(grouped).data.results.map((item) => item.path)).toEqual(["deploy.md"]);
      expect(grouped._meta?.["ivoai/source"]).toMatchObject({
        alias: "acme-1",
        redundancy_group: "acme-prod",
      });
      const tools = (await viaGroup.listTools()).tools;
      expect(tools.find((tool) => tool.name === "context_search")?.outputSchema).toBeDefined();
    } finally {
      await viaGroup.close();
      await viaPrimary.close();
      await group.stop();
      await direct.stop();
    }
  });

  it("survives a stalled, then a killed primary: partial within the deadline, then failover", async () => {
    // Generous, so that the live source answers within it however busy the host is.
    const router = await startRouter(["--deadline-ms", "5000"]);
    const mcp = await client(router.endpoints.context, router.capability);
    const primary = servers["acme-1"] as { root: string; server: RunningServer };
    try {
      primary.server.child.kill("SIGSTOP");
      // The stopped primary never answers: only the router's deadline gives this partial answer.
      const stalled = federation(
        await mcp.callTool({ name: "context_search", arguments: { query: "wombat" } }),
      );
      expect(stalled.federation.partial).toBe(true);
      expect(stalled.federation.sources.find((source) => source.alias === "acme-1")?.status).toBe("timeout");
      expect(stalled.federation.items.map((item) => item._source.alias)).toEqual(["mindsite"]);

      primary.server.child.kill("SIGKILL");
      await new Promise((resolve) => primary.server.child.once("exit", resolve));
      const failover = federation(
        await mcp.callTool({ name: "context_search", arguments: { query: "wombat" } }),
      );
      const acme = failover.federation.sources.find((source) => source.alias === "acme-2");
      expect(acme).toMatchObject({ status: "ok", failed_over_from: ["acme-1"] });
      expect(failover.federation.partial).toBe(false);
    } finally {
      await mcp.close();
      await router.stop();
    }
  });

  it("gives AUTO's workers a read-only capability: read tools only, writes and hooks refused", async () => {
    const router = await startRouter(["--knowledge-source", "mindsite"]);
    const worker = await client(router.endpoints.memory, router.read_only_capability);
    try {
      const names = (await worker.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain("memory_query");
      expect(names).not.toContain("memory_write_page");
      expect(names).not.toContain("memory_delete_page");
      const write = await worker.callTool({
        name: "memory_write_page",
        arguments: { path: "notes/worker", body: "from a worker" },
      });
      expect(write.isError).toBe(true);
      expect(textOf(write)).toMatch(/READ_ONLY_WORKER/);
      const read = await worker.callTool({ name: "memory_query", arguments: { query: "wombat" } });
      expect(read.isError).toBeFalsy();
      const hook = await fetch(router.endpoints.hooks, {
        method: "POST",
        headers: {
          authorization: `Bearer ${router.read_only_capability}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ event: "session_start" }),
      });
      expect(hook.status).toBe(403);
      const pending = JSON.parse(
        (
          await runIvoai([
            "server",
            "approvals",
            "list",
            "--root",
            servers.mindsite?.root as string,
            "--json",
          ])
        ).stdout,
      );
      expect(pending.approvals).toEqual([]);
    } finally {
      await worker.close();
      await router.stop();
    }
  });

  it("reports a failed primary write clearly and never retries it on the standby", async () => {
    // acme-1 is down since the previous test; an automatic selection (mindsite left out) still includes it.
    expect((await ivoai(["connect", "server", "disable", "mindsite"])).code).toBe(0);
    const router = await startRouter();
    const writer = await client(router.endpoints.memory, router.capability);
    try {
      const result = await writer.callTool({
        name: "memory_write_page",
        arguments: { path: "notes/y", body: "second" },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/write to acme-1 failed and was not retried/);
      const standby = JSON.parse(
        (
          await runIvoai([
            "server",
            "approvals",
            "list",
            "--root",
            servers["acme-2"]?.root as string,
            "--json",
          ])
        ).stdout,
      );
      expect(standby.approvals).toEqual([]);
    } finally {
      await writer.close();
      await router.stop();
      await ivoai(["connect", "server", "enable", "mindsite"]);
    }
  });

  describe("hostile upstreams", () => {
    const fakes: FakeServer[] = [];
    afterAll(async () => {
      for (const fake of fakes) await fake.close();
    });
    const connectFake = async (alias: string, mode: Parameters<typeof startFakeIvoai>[0]) => {
      const fake = await startFakeIvoai(mode);
      fakes.push(fake);
      return {
        fake,
        result: await ivoai(
          ["connect", "server", "add", alias, "--url", fake.url, "--purpose", alias, "--code-stdin"],
          "code\n",
        ),
      };
    };

    it("refuses a cross-origin redirect at discovery", async () => {
      const { result } = await connectFake("redir-discovery", "redirect-discovery");
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /refused a redirect from http:\/\/127\.0\.0\.1:\d+ to http:\/\/127\.0\.0\.2:9/,
      );
    });

    it("refuses a server whose discovery points an endpoint at another origin", async () => {
      const { result } = await connectFake("escaping", "escaping-endpoint");
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/advertises context_mcp_endpoint outside its own origin/);
    });

    it("reports corrupt, redirecting and oversized sources as failed while healthy ones answer", async () => {
      for (const [alias, mode] of [
        ["corrupt", "corrupt"],
        ["redirecting", "redirect"],
        ["oversized", "oversized"],
      ] as const) {
        expect((await connectFake(alias, mode)).result.code).toBe(0);
      }
      const router = await startRouter([
        "--knowledge-source",
        "mindsite,corrupt,redirecting,oversized",
        "--deadline-ms",
        "5000",
      ]);
      const mcp = await client(router.endpoints.context, router.capability);
      try {
        const result = federation(
          await mcp.callTool({ name: "context_search", arguments: { query: "wombat" } }),
        );
        const status = Object.fromEntries(result.federation.sources.map((source) => [source.alias, source]));
        expect(result.federation.partial).toBe(true);
        expect(status.mindsite?.status).toBe("ok");
        expect(status.corrupt?.status).toMatch(/malformed|error/);
        expect(JSON.stringify(status.redirecting)).toMatch(/refused a redirect/);
        expect(JSON.stringify(status.oversized)).toMatch(/limit/);
        expect(result.federation.items.map((item) => item._source.alias)).toEqual(["mindsite"]);
      } finally {
        await mcp.close();
        await router.stop();
      }
    });

    it("treats a tool it does not know as a write unless the source annotates it read-only", async () => {
      const { fake, result } = await connectFake("extra", "extra-tools");
      expect(result.code).toBe(0);
      const router = await startRouter(["--knowledge-source", "mindsite,extra", "--deadline-ms", "5000"]);
      const mcp = await client(router.endpoints.context, router.capability);
      try {
        const write = await mcp.callTool({ name: "context_reindex", arguments: {} });
        expect(write.isError).toBe(true);
        expect(textOf(write)).toMatch(/^WRITE_DESTINATION=AMBIGUOUS: context_reindex/);
        expect(fake.calls).toBe(0);
        const read = await mcp.callTool({ name: "context_peek", arguments: {} });
        expect(textOf(read)).not.toMatch(/WRITE_DESTINATION/);
        expect(fake.calls).toBe(1);
      } finally {
        await mcp.close();
        await router.stop();
      }
    });
  });

  describe("write classification and DNS rebinding", () => {
    it("routes memory_promote_episode as a write: refused with two memory destinations", async () => {
      const router = await startRouter(["--knowledge-source", "acme-2,mindsite"]);
      const mcp = await client(router.endpoints.memory, router.capability);
      try {
        const result = await mcp.callTool({
          name: "memory_promote_episode",
          arguments: { event_id: 1, path: "notes/promoted" },
        });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/^WRITE_DESTINATION=AMBIGUOUS: memory_promote_episode/);
      } finally {
        await mcp.close();
        await router.stop();
      }
    });

    it("serves only its own loopback host names, and no foreign browser origin", async () => {
      const router = await startRouter(["--knowledge-source", "acme-2,mindsite"]);
      const port = new URL(router.endpoints.context).port;
      const auth = { authorization: `Bearer ${router.capability}` };
      try {
        for (const endpoint of [router.endpoints.context, router.endpoints.memory]) {
          const evilHost = await rawPost(endpoint, { ...auth, host: `evil.example.com:${port}` });
          expect(evilHost.status).toBe(403);
          expect(JSON.parse(evilHost.body)).toMatchObject({ error: "forbidden_host" });
          const evilOrigin = await rawPost(endpoint, { ...auth, origin: "http://evil.example.com" });
          expect(evilOrigin.status).toBe(403);
          expect(JSON.parse(evilOrigin.body)).toMatchObject({ error: "forbidden_origin" });
          expect((await rawPost(endpoint, auth)).status).toBe(200);
          expect((await rawPost(endpoint, { ...auth, host: `localhost:${port}` })).status).toBe(200);
        }
        // A single-source pass-through endpoint and the hooks endpoint sit behind the same check.
        expect(
          (await rawPost(router.endpoints.hooks, { ...auth, host: "evil.example.com" }, "{}")).status,
        ).toBe(403);
      } finally {
        await router.stop();
      }
    });
  });

  it("disconnects one server, then all", async () => {
    expect((await ivoai(["disconnect", "server", "mindsite"])).code).toBe(0);
    const left = (
      JSON.parse((await ivoai(["connect", "server", "list", "--json"])).stdout) as {
        servers: { alias: string }[];
      }
    ).servers;
    expect(left.map((entry) => entry.alias)).not.toContain("mindsite");
    expect(left.map((entry) => entry.alias)).toContain("acme-2");
    expect((await ivoai(["disconnect", "server", "--all"])).code).toBe(0);
    expect(JSON.parse((await ivoai(["connect", "server", "list", "--json"])).stdout)).toEqual({
      servers: [],
    });
    const secrets = JSON.parse(
      await readFile(path.join(env.XDG_CONFIG_HOME as string, "ivoai/secrets.json"), "utf8"),
    );
    expect(secrets).toEqual({ schema: 2, servers: {} });
  });
});
