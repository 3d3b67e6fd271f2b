import { describe, expect, it } from "vitest";
import { TOOL_NAMES, TOOLS } from "../../protocol/tools.js";
import { KNOWLEDGE_POLICY } from "./policy.js";

describe("knowledge policy", () => {
  it("names every write tool of the protocol's table as a proposal that waits for approval", () => {
    const writes = TOOL_NAMES.filter((name) => TOOLS[name].tier !== "read");
    expect(writes).toContain("memory_promote_episode");
    const line = KNOWLEDGE_POLICY.split("\n").find((text) => text.startsWith("- Memory writes")) ?? "";
    for (const name of writes) expect(line).toContain(name);
  });
});
