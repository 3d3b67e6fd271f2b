import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { AWS_ID, AWS_SECRET, b64url, jwt, SECRETS } from "../../../test/secret-fixtures.js";
import { findSecret } from "./secret-scan.js";

describe("secret scan", () => {
  it("finds private keys, AWS key pairs, GitHub and Slack tokens and issued JWTs", () => {
    for (const [name, text] of Object.entries(SECRETS))
      expect(findSecret(Buffer.from(text)), name).toBe(name.replace(/ \(.*\)$/, ""));
  });

  it("leaves prose, placeholders, lone key ids, hashes and illustrative tokens alone", () => {
    const harmless = [
      "Keep the PRIVATE KEY out of git. A PEM starts with -----BEGIN PRIVATE KEY----- and a base64 body.",
      "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----\n",
      "Access key ids look like AKIAIOSFODNN7EXAMPLE (20 characters).",
      `${AWS_ID} was rotated; commit ${createHash("sha1").update("x").digest("hex")}`,
      `token: ${["gh", "p_"].join("")}${"x".repeat(36)} or ${["gh", "p_"].join("")}${"X0".repeat(18)}`,
      `SLACK_TOKEN=${["xo", "xb-"].join("")}your-token-here and ${["xo", "xb-"].join("")}XXXXXXXXXXXX-XXXXXXXXXXXXX-XXXX`,
      `jwt.io's example: ${jwt({ sub: "1234567890", name: "John Doe", iat: 1516239022 })}`,
      `unsigned: ${b64url({ alg: "none" })}.${b64url({ exp: 1 })}.${"A".repeat(40)}`,
      "A word about thoughts, highlights, xoxo, eyJ and AKIA.",
    ];
    for (const text of harmless) expect(findSecret(Buffer.from(text)), text).toBeUndefined();
  });

  // 2 MiB: a quadratic scan takes minutes on it, a linear one milliseconds.
  it("stays linear on hostile 2 MiB input (CPU time)", () => {
    const size = 2 * 1024 * 1024;
    const fill = (unit: string) => Buffer.from(unit.repeat(Math.ceil(size / unit.length)).slice(0, size));
    const hostile: Record<string, Buffer> = {
      anchors: fill("PRIVATE KEY"),
      "begin markers": fill("-----BEGIN PRIVATE KEY-----"),
      "marker lines": fill(`-----BEGIN PRIVATE KEY-----\n${"A".repeat(39)}\n`),
      "long header lines": fill(`-----BEGIN PRIVATE KEY-----\n${"x:".repeat(60)}\n`),
      "key ids": fill(`${AWS_ID} `),
      "key ids and 39-byte secrets": fill(`${AWS_ID} ${AWS_SECRET.slice(1)} `),
      "one base64 run": fill("aB3/"),
      "github prefixes": fill(["gh", "p_"].join("")),
      "github runs": fill(`${["gh", "p_"].join("")}${"a1B".repeat(12)}a `),
      "pat prefixes": fill(["github", "_pat_"].join("")),
      "slack prefixes": fill(`${["xo", "xb-"].join("")}12345678-`),
      "jwt anchors": fill("eyJ"),
      "jwt dots": fill(" eyJ.eyJ."),
      "jwt-shaped": fill(` ${b64url({ alg: "HS256" })}.${b64url({ n: 1 })}.${"s".repeat(40)}`),
      "long jwt runs": fill(` eyJ${"a".repeat(2000)}.${"b".repeat(20_000)}.`),
    };
    for (const [name, data] of Object.entries(hostile)) {
      const ms = cpuMs(() => findSecret(data), 2);
      expect(ms, `${name}: ${ms.toFixed(0)} ms`).toBeLessThan(1000);
    }
  });
});
