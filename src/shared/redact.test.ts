import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { redactText, redactValue } from "./redact.js";

describe("redaction", () => {
  it("removes bearer values, ivoai secrets and common API-key shapes from text", () => {
    const secrets = [
      `ivoai_cred_${"a".repeat(43)}`,
      `ivoai_enr_${"B".repeat(43)}`,
      "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
      "sk-ant-api03-abcdefghijklmnopqrstuvwx",
      `ghp_${"x".repeat(36)}`,
      "AKIAIOSFODNN7EXAMPLE",
      `xoxb-${"1".repeat(12)}-abcdef`,
    ];
    for (const secret of secrets) {
      const out = redactText(`value=${secret} end`);
      expect(out).not.toContain(secret);
      expect(out).toContain("[REDACTED]");
    }
    expect(redactText("Authorization: Bearer abcdefghijklmnop")).toBe("Authorization: Bearer [REDACTED]");
    expect(redactText("a plain sentence about tokens")).toBe("a plain sentence about tokens");
  });

  it("redacts secret-named fields whatever their value looks like", () => {
    expect(redactValue({ code: "short", nested: { authorization: "x", path: "/v1" } })).toEqual({
      code: "[REDACTED]",
      nested: { authorization: "[REDACTED]", path: "/v1" },
    });
  });

  it("applies to every logged line", () => {
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line) });
    const credential = `ivoai_cred_${"z".repeat(43)}`;
    logger.info(`got ${credential}`, { header: `Bearer ${credential}`, credential });
    expect(lines.join("")).not.toContain(credential);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ level: "info", credential: "[REDACTED]" });
  });
});
