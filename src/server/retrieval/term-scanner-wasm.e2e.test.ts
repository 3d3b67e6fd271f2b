// A build check, so it runs with the e2e project: the committed WebAssembly is what its AssemblyScript source
// compiles to (the compiler takes several seconds, too slow for the unit loop).
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("the term scanner's WebAssembly", () => {
  it("is the module its AssemblyScript source compiles to (no stale committed bytes)", () => {
    const check = spawnSync(process.execPath, ["scripts/build-wasm.mjs", "--check"], { encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  }, 120_000);
});
