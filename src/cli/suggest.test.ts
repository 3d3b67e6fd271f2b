import { describe, expect, it } from "vitest";
import { closestMatch, editDistance } from "./suggest.js";

describe("suggestions", () => {
  it("counts insertions, deletions, substitutions and adjacent swaps as one edit each", () => {
    expect(editDistance("server", "server")).toBe(0);
    expect(editDistance("sever", "server")).toBe(1);
    expect(editDistance("servre", "server")).toBe(1);
    expect(editDistance("servers", "server")).toBe(1);
    expect(editDistance("xerver", "server")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("suggests the nearest command or flag, a unique prefix, and nothing for a stranger", () => {
    const commands = ["server", "session", "connect", "completion", "help"];
    expect(closestMatch("sever", commands)).toBe("server");
    expect(closestMatch("sesion", commands)).toBe("session");
    expect(closestMatch("comp", commands)).toBe("completion");
    expect(closestMatch("hlep", commands)).toBe("help");
    expect(closestMatch("xyzzy", commands)).toBeUndefined();
    expect(closestMatch("se", commands)).toBeUndefined();
    expect(closestMatch("--lmit", ["--limit", "--root", "--json"])).toBe("--limit");
    expect(closestMatch("--jsno", ["--limit", "--root", "--json"])).toBe("--json");
  });
});
