// AUTO with one of two knowledge servers down (issue 30): headless output warns naming the source that did
// not answer, the record says which sources were configured, selected, excluded and failed and that the
// knowledge is partial, and the brief the executor receives stays readable text within its bound.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BRIEF_BYTES } from "../src/client/auto/knowledge.js";
import { autoClientEnv } from "./auto-harness.js";
import { writeTree } from "./context-helpers.js";
import { type FakeClis, installFakeClis } from "./fake-clis.js";
import { createCode, initWithDocs, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";

interface SessionJson {
  id: string;
  auto: {
    knowledge: { memory: string; context: string; brief_bytes: number } | null;
    sources: {
      configured: string[];
      selected: string[];
      excluded: { alias: string; reason: string }[];
      failed: { alias: string; reason: string }[];
    } | null;
  };
}

/** Five pipeline stages, each a distinct snippet both servers hold, so a doubled snippet is easy to count. */
const STAGES = ["build", "canary", "soak", "fleet", "rollback"];
const docsFor = (server: string) =>
  Object.fromEntries(
    STAGES.map((stage) => [
      `${stage}.md`,
      `# Wombat ${stage}\n\nThe wombat pipeline ${stage} stage on ${server}: marker-${server}-${stage}.`,
    ]),
  );

describe("ivoai auto with partial knowledge sources", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const servers: RunningServer[] = [];
  let fakes: FakeClis;
  let env: NodeJS.ProcessEnv;

  /** A server with the wombat docs, connected under `alias`; returns it running. */
  const connectServer = async (alias: string): Promise<RunningServer> => {
    const root = await tempDir(`ivoai-${alias}-`);
    const docs = await tempDir(`ivoai-${alias}-docs-`);
    cleanups.push(root.cleanup, docs.cleanup);
    await writeTree(docs.dir, docsFor(alias));
    await initWithDocs(root.dir, docs.dir);
    const server = await startServer(root.dir);
    servers.push(server);
    const { code } = await createCode(root.dir);
    const added = await runIvoai(
      ["connect", "server", "add", alias, "--url", server.url, "--purpose", alias, "--code-stdin"],
      { env, input: `${code}\n` },
    );
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    return server;
  };

  beforeAll(async () => {
    const xdg = await tempDir("ivoai-client-");
    cleanups.push(xdg.cleanup);
    fakes = await installFakeClis(path.join(xdg.dir, "fakes"));
    env = autoClientEnv(xdg.dir, fakes);
    const acme = await connectServer("acme");
    await connectServer("mindsite");
    await connectServer("archive");
    expect((await runIvoai(["connect", "server", "disable", "archive"], { env })).code).toBe(0);
    // acme goes away after it was connected: its port now refuses connections.
    await acme.stop();
  }, 180_000);
  afterAll(async () => {
    await fakes?.killAll();
    for (const server of servers) await server.stop().catch(() => undefined);
    for (const cleanup of cleanups) await cleanup();
  });

  it("warns naming the failed source, records partial knowledge and keeps the brief bounded text", async () => {
    await fakes.reset();
    await fakes.script({
      codex: { turns: { answer: [{ reply: "Build, canary, soak, fleet." }] } },
      claude: {},
    });
    const result = await runIvoai(["auto", "--print", "What is the wombat pipeline?"], {
      env,
      timeoutMs: 120_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe("Build, canary, soak, fleet.");
    const warning = result.stderr.split("\n").find((line) => line.includes("knowledge is partial"));
    expect(warning, result.stderr).toMatch(
      /^ivoai auto: knowledge is partial: acme \(.+\) did not answer; using mindsite$/,
    );
    expect(result.stderr).not.toMatch(/ivoai_cap_|Bearer /);

    const listed = JSON.parse((await runIvoai(["session", "list", "--json"], { env })).stdout) as {
      sessions: { id: string }[];
    };
    const id = listed.sessions[0]?.id as string;
    const shown = await runIvoai(["session", "show", id, "--json"], { env });
    expect(shown.code).toBe(0);
    const session = JSON.parse(shown.stdout) as SessionJson;
    expect(session.auto.knowledge).toMatchObject({ memory: "partial", context: "partial" });
    expect(session.auto.sources).toMatchObject({
      configured: ["acme", "mindsite"],
      selected: ["acme", "mindsite"],
      excluded: [{ alias: "archive", reason: "disabled" }],
    });
    expect(session.auto.sources?.failed.map((entry) => entry.alias)).toEqual(["acme"]);
    const text = await runIvoai(["session", "show", id], { env });
    expect(text.stdout).toMatch(
      / {2}sources: {5}mindsite; failed acme \(.+\); excluded archive \(disabled\)/,
    );

    // The brief the executor received: readable text, each snippet once, within the bound.
    const turns = (await fakes.log()).filter((line) => line.role === "answer");
    expect(turns).toHaveLength(1);
    const prompt = turns[0]?.prompt ?? "";
    const brief = /<<<ivoai-knowledge\n([\s\S]*)\nivoai-knowledge>>>/.exec(prompt)?.[1] ?? "";
    expect(brief, prompt).toContain("marker-mindsite-build");
    expect(Buffer.byteLength(brief)).toBeLessThanOrEqual(MAX_BRIEF_BYTES);
    expect(Buffer.byteLength(brief)).toBe(session.auto.knowledge?.brief_bytes);
    expect(brief).not.toContain('"federation"');
    expect(brief).not.toMatch(/^\s*[{[]/m);
    for (const stage of STAGES) {
      const marker = `marker-mindsite-${stage}`;
      if (brief.includes(marker)) expect(brief.split(marker)).toHaveLength(2);
    }
    expect(brief).toMatch(/## acme: no answer/);
  }, 180_000);
});
