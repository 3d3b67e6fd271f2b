// The managed OpenCode frontend's start-up failures, with a fake `opencode` executable: a server that exits
// before listening and one that never listens both fail with a clear message, and nothing is left running.
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../agents/catalog.js";
import { openRegistry } from "../connections/registry.js";
import { runOpencodeFrontend } from "./opencode.js";

let root = "";
let env: NodeJS.ProcessEnv = {};

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "ivoai-opencode-frontend-"));
  const bin = path.join(root, "bin");
  await mkdir(bin, { recursive: true });
  await writeFile(
    path.join(bin, "opencode"),
    [
      "#!/bin/sh",
      'case "$1" in',
      `  --version) echo ${TESTED_VERSIONS.opencode} ;;`,
      '  serve) echo "$$" > "$FAKE_SERVE_PID"',
      '    if [ -n "$FAKE_SERVE_HANG" ]; then exec sleep 300; fi',
      '    echo "boom: cannot bind" >&2; exit 2 ;;',
      "esac",
      "",
    ].join("\n"),
  );
  await chmod(path.join(bin, "opencode"), 0o755);
  env = {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: root,
    XDG_CONFIG_HOME: path.join(root, "config"),
    XDG_STATE_HOME: path.join(root, "state"),
    XDG_DATA_HOME: path.join(root, "data"),
    FAKE_SERVE_PID: path.join(root, "serve.pid"),
  };
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

const start = (extra: NodeJS.ProcessEnv, startTimeoutMs = 10_000) =>
  runOpencodeFrontend({
    knowledgeSources: [],
    registry: openRegistry({ ...env, ...extra }),
    env: { ...env, ...extra },
    cwd: root,
    selfCommand: [process.execPath, "ivoai"],
    notice: () => undefined,
    killAfterMs: 500,
    startTimeoutMs,
  });

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("runOpencodeFrontend start-up", () => {
  it("reports a server that exits before listening, with its last output", async () => {
    await expect(start({})).rejects.toThrow(
      /opencode serve did not start: it exited \(2\): boom: cannot bind/,
    );
  });

  it("gives up on a server that never listens, within the bound, and ends its process group", async () => {
    await expect(start({ FAKE_SERVE_HANG: "1" }, 1_000)).rejects.toThrow(/no "listening" line within 1 s/);
    const pid = Number((await readFile(path.join(root, "serve.pid"), "utf8")).trim());
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
  });
});
