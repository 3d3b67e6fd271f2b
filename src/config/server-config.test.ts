import { describe, expect, it } from "vitest";
import { parseServerConfig } from "./server-config.js";

describe("server settings", () => {
  const base = '[server]\npublic_url = "http://127.0.0.1:8787"\n';

  it("gives Web MCP grants an absolute lifetime of 90 days unless configured", () => {
    expect(parseServerConfig(base, "server.toml").oauth.refresh_family_ttl).toBe("90d");
    const configured = parseServerConfig(`${base}[oauth]\nrefresh_family_ttl = "30d"\n`, "server.toml");
    expect(configured.oauth.refresh_family_ttl).toBe("30d");
  });

  it("refuses a lifetime that is not a duration, naming the key", () => {
    expect(() =>
      parseServerConfig(`${base}[oauth]\nrefresh_family_ttl = "forever"\n`, "server.toml"),
    ).toThrow(/oauth\.refresh_family_ttl: use a duration like 90d/);
  });
});
