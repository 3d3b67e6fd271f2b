import { describe, expect, it } from "vitest";
import { forwardedClientAddress } from "./client-address.js";
import { createCidrMatcher } from "./listener-policy.js";

describe("the client address behind a reverse proxy", () => {
  const trusted = createCidrMatcher(["10.0.0.0/8", "fd00::/8"]);

  it("reads X-Forwarded-For only when the peer is a trusted proxy", () => {
    expect(forwardedClientAddress("10.0.0.5", "203.0.113.7", trusted)).toBe("203.0.113.7");
    expect(forwardedClientAddress("198.51.100.1", "203.0.113.7", trusted)).toBe("198.51.100.1");
    expect(forwardedClientAddress("10.0.0.5", undefined, trusted)).toBe("10.0.0.5");
    expect(forwardedClientAddress("::ffff:10.0.0.5", "203.0.113.7", trusted)).toBe("203.0.113.7");
  });

  it("takes the right-most address that is not itself a trusted proxy", () => {
    // The client wrote the left entries; the proxies appended the rest.
    expect(forwardedClientAddress("10.0.0.5", "1.1.1.1, 203.0.113.7, 10.0.0.9", trusted)).toBe("203.0.113.7");
    expect(forwardedClientAddress("10.0.0.5", "203.0.113.7,fd00::3", trusted)).toBe("203.0.113.7");
    expect(forwardedClientAddress("10.0.0.5", "[2001:db8::1]:443", trusted)).toBe("2001:db8::1");
    expect(forwardedClientAddress("10.0.0.5", "203.0.113.7:5123", trusted)).toBe("203.0.113.7");
    // Only trusted hops: the left-most of them is the client.
    expect(forwardedClientAddress("10.0.0.5", "10.1.1.1, 10.0.0.9", trusted)).toBe("10.1.1.1");
  });

  it("keys a non-address entry a trusted proxy wrote on its bounded text, never on what lies left of it", () => {
    expect(forwardedClientAddress("10.0.0.5", "203.0.113.7, unknown", trusted)).toBe("unparsed:unknown");
    expect(forwardedClientAddress("10.0.0.5", "junk, 10.0.0.9", trusted)).toBe("unparsed:junk");
    expect(forwardedClientAddress("10.0.0.5", `1.2.3.4, _${"x".repeat(500)}`, trusted)).toBe(
      `unparsed:_${"x".repeat(63)}`,
    );
    expect(forwardedClientAddress("10.0.0.5", "", trusted)).toBe("10.0.0.5");
    expect(forwardedClientAddress("10.0.0.5", "203.0.113.7, ", trusted)).toBe("10.0.0.5");
  });
});
