// A build check, so it runs with the e2e project: the committed WebAssembly modules (the term scanner, the vector
// scan) are what their AssemblyScript sources compile to (the compiler takes seconds, too slow for the unit loop).
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("the committed WebAssembly modules", () => {
  it("are what their AssemblyScript sources compile to (no stale committed bytes)", () => {
    const check = spawnSync(process.execPath, ["scripts/build-wasm.mjs", "--check"], { encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  }, 120_000);
});
