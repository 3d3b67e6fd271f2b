import { describe, expect, it } from "vitest";
import { redirectMatches, validateRedirectUri } from "./validate.js";

describe("redirect URIs", () => {
  it("accepts loopback only as 127.0.0.1, [::1] or localhost, with any port", () => {
    for (const uri of [
      "http://127.0.0.1/cb",
      "http://127.0.0.1:33418/cb",
      "http://[::1]:9/cb",
      "http://localhost/cb",
    ])
      expect(validateRedirectUri(uri).ok, uri).toBe(true);
  });

  it("refuses the other spellings the URL parser would turn into 127.0.0.1", () => {
    for (const uri of [
      "http://127.1/cb",
      "http://0x7f000001/cb",
      "http://2130706433/cb",
      "http://0177.0.0.1/cb",
      "http://127.0.0.1.:80/cb",
      "http://[::ffff:7f00:1]/cb",
      "http://127.0.0.2/cb",
      "https://x.example/cb\u001b[1A\u001b[2K",
    ])
      expect(validateRedirectUri(uri), uri).toMatchObject({ ok: false, error: "invalid_redirect_uri" });
  });

  it("accepts https with a host written in canonical form, an origin with or without its root path", () => {
    for (const uri of [
      "https://chatgpt.com/connector_platform_oauth_redirect",
      "https://claude.ai/api/mcp/auth_callback",
      "https://a.example:8443/cb?x=1",
      "https://a.example",
      "https://a.example/",
      "https://xn--bcher-kva.example/cb",
    ])
      expect(validateRedirectUri(uri), uri).toEqual({ ok: true, value: uri });
  });

  it("refuses URIs whose canonical form differs from what was sent, naming the canonical form", () => {
    for (const [uri, canonical] of [
      ["https:evil.example", "https://evil.example/"],
      ["https:/evil.example/cb", "https://evil.example/cb"],
      ["https:\\\\evil.example\\cb", "https://evil.example/cb"],
      ["HTTPS://evil.example/cb", "https://evil.example/cb"],
      ["https://EVIL.example/cb", "https://evil.example/cb"],
      ["https://evil.example:443/cb", "https://evil.example/cb"],
      ["https://evil.example/a b", "https://evil.example/a%20b"],
      ["https://evil.example/a/../cb", "https://evil.example/cb"],
      ["https://bücher.example/cb", "https://xn--bcher-kva.example/cb"],
      ["https://evil.example?x", "https://evil.example/?x"],
      ["http://localhost:80/cb", "http://localhost/cb"],
    ])
      expect(validateRedirectUri(uri), uri).toEqual({
        ok: false,
        error: "invalid_redirect_uri",
        description: `redirect URIs must be written in canonical form: ${canonical}`,
      });
  });

  it("lets a loopback redirect change its port, but not its spelling", () => {
    const registered = ["http://127.0.0.1/cb"];
    expect(redirectMatches(registered, "http://127.0.0.1:5555/cb")).toBe(true);
    expect(redirectMatches(registered, "http://127.0.0.1:5555/x/../cb")).toBe(false);
    expect(redirectMatches(registered, "http://127.1:5555/cb")).toBe(false);
    expect(redirectMatches(registered, "http://0x7f000001/cb")).toBe(false);
  });
});
