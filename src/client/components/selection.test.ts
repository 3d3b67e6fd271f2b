import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProbe } from "./probe.js";
import { compressionCommand, selectCompression, selectCoordinator } from "./selection.js";

let bin: string;
beforeAll(async () => {
  bin = await mkdtemp(path.join(tmpdir(), "ivoai-selection-"));
});
afterAll(() => rm(bin, { recursive: true, force: true }));

async function script(name: string, body: string): Promise<string> {
  const file = path.join(bin, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

describe("runProbe", () => {
  it("says a hung program timed out, and settles at the deadline", async () => {
    const hang = await script("hang", "sleep 30 & wait");
    const outcome = await runProbe(hang, ["--version"], { timeoutMs: 300 });
    expect(outcome).toMatchObject({ ok: false, reason: "timed out after 0.3 s", timedOut: true });
  });
  it("says a missing program is not installed and a failing one what it said", async () => {
    expect(await runProbe(path.join(bin, "absent"), [], { timeoutMs: 1000 })).toMatchObject({
      ok: false,
      reason: "not installed",
    });
    const fail = await script("fail", "echo 'broken install' >&2; exit 3");
    expect(await runProbe(fail, [], { timeoutMs: 5000 })).toMatchObject({
      ok: false,
      reason: "exited with status 3: broken install",
    });
  });
});

describe("selectCompression", () => {
  it("falls back to direct with the preflight's reason", async () => {
    const plan = await selectCompression({
      agent: "codex",
      knowledgeActive: false,
      requested: "headroom",
      managedBin: path.join(bin, "empty"),
    });
    expect(plan).toMatchObject({
      implementation: "direct",
      why: "direct: headroom preflight failed: not installed",
    });
    expect(compressionCommand(plan, "codex", "/x/codex")).toEqual(["/x/codex"]);
  });
  it("runs caveman when its preflight passes, never while knowledge is active", async () => {
    const managed = await mkdtemp(path.join(bin, "managed-"));
    await writeFile(path.join(managed, "caveman"), "#!/bin/sh\necho caveman 1.2.3\n");
    await chmod(path.join(managed, "caveman"), 0o755);
    const input = { agent: "claude" as const, requested: "caveman" as const, managedBin: managed };
    const plan = await selectCompression({ ...input, knowledgeActive: false });
    expect(plan).toMatchObject({ implementation: "caveman", why: "caveman: caveman 1.2.3 preflight passed" });
    expect(compressionCommand(plan, "claude", "/x/claude")).toEqual([
      path.join(managed, "caveman"),
      "run",
      "--",
      "/x/claude",
    ]);
    const exact = await selectCompression({ ...input, knowledgeActive: true });
    expect(exact.why).toMatch(/^direct: ivoai memory\/context active/);
  });
});

describe("selectCoordinator", () => {
  it("names the setting and where ruflo was looked for", async () => {
    const env = { PATH: path.join(bin, "nowhere") };
    const none = await selectCoordinator({ setting: "none", managedBin: path.join(bin, "m"), env });
    expect(none).toMatchObject({ implementation: "none", active: false, ok: true });
    expect(none.why).toMatch(/^none: \[auto\] coordinator = "none" \(ruflo is not on PATH nor in /);
    const missing = await selectCoordinator({ setting: "ruflo", managedBin: path.join(bin, "m"), env });
    expect(missing).toMatchObject({ implementation: "ruflo", active: false, ok: false });
    expect(missing.why).toMatch(/coordinator = "ruflo" but ruflo is not installed/);
  });

  it("auto: none and why while ruflo is absent, ruflo (admission mandatory) once it is there", async () => {
    const managed = path.join(bin, "auto-managed");
    const env = { PATH: path.join(bin, "nowhere") };
    const absent = await selectCoordinator({ setting: "auto", managedBin: managed, env });
    expect(absent).toMatchObject({ implementation: "none", active: false, ok: true, command: null });
    expect(absent.why).toMatch(
      /^none: \[auto\] coordinator = "auto" and ruflo is not on PATH nor in .*admission$/,
    );
    await mkdir(managed, { recursive: true });
    await writeFile(path.join(managed, "ruflo"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    const present = await selectCoordinator({ setting: "auto", managedBin: managed, env });
    expect(present).toMatchObject({ implementation: "ruflo", active: true, ok: true });
    const broken = await selectCoordinator({
      setting: "auto",
      managedBin: managed,
      env,
      probeVersion: { timeoutMs: 2000 },
    });
    expect(broken).toMatchObject({ implementation: "ruflo", active: false, ok: false });
    expect(broken.why).toMatch(/AUTO refuses to start$/);
    await writeFile(path.join(managed, "ruflo"), "#!/bin/sh\necho 'ruflo v3.42.5'\n", { mode: 0o755 });
    const other = await selectCoordinator({
      setting: "auto",
      managedBin: managed,
      env,
      probeVersion: { timeoutMs: 2000 },
    });
    expect(other).toMatchObject({
      implementation: "ruflo",
      active: false,
      ok: false,
      version: "ruflo v3.42.5",
    });
    expect(other.why).toContain(
      "is ruflo v3.42.5, not the reviewed ruflo v3.38.12 (its admission refuses it;",
    );
  });
});
