import { describe, expect, it } from "vitest";
import { checkOrigin } from "./origin-policy.js";

const verdict = (
  host: string | undefined,
  origin: string | undefined,
  options: Parameters<typeof checkOrigin>[1],
) => {
  const result = checkOrigin({ host, origin }, options);
  return result.ok ? "ok" : result.error;
};

describe("Host/Origin policy", () => {
  const publicOnly = { publicOrigin: "https://ai.example.com" };
  const boundLoopback = { ...publicOnly, loopback: {} };
  const router = { publicOrigin: "http://127.0.0.1:4711", loopback: { port: 4711 } };

  it("accepts the public host, with or without its default port, and its own origin", () => {
    expect(verdict("ai.example.com", undefined, publicOnly)).toBe("ok");
    expect(verdict("AI.example.com:443", "https://ai.example.com", publicOnly)).toBe("ok");
  });

  it("refuses other, malformed or missing hosts and foreign or opaque origins", () => {
    expect(verdict("evil.example.com", undefined, publicOnly)).toBe("forbidden_host");
    expect(verdict("ai.example.com:8443", undefined, publicOnly)).toBe("forbidden_host");
    expect(verdict("ai.example.com@evil.example.com", undefined, publicOnly)).toBe("forbidden_host");
    expect(verdict("", undefined, publicOnly)).toBe("forbidden_host");
    expect(verdict(undefined, undefined, publicOnly)).toBe("forbidden_host");
    expect(verdict("ai.example.com", "http://ai.example.com", publicOnly)).toBe("forbidden_origin");
    expect(verdict("ai.example.com", "https://evil.example.com", publicOnly)).toBe("forbidden_origin");
    expect(verdict("ai.example.com", "null", publicOnly)).toBe("forbidden_origin");
  });

  it("accepts loopback names only when bound on loopback", () => {
    expect(verdict("127.0.0.1:8787", undefined, publicOnly)).toBe("forbidden_host");
    expect(verdict("127.0.0.1:8787", undefined, boundLoopback)).toBe("ok");
    expect(verdict("[::1]:8787", "http://localhost:3000", boundLoopback)).toBe("ok");
  });

  it("holds the session router to its own port", () => {
    expect(verdict("127.0.0.1:4711", undefined, router)).toBe("ok");
    expect(verdict("localhost:4711", "http://localhost:4711", router)).toBe("ok");
    expect(verdict("localhost:4712", undefined, router)).toBe("forbidden_host");
    expect(verdict("evil.example.com:4711", undefined, router)).toBe("forbidden_host");
    expect(verdict("127.0.0.1:4711", "http://evil.example.com", router)).toBe("forbidden_origin");
    expect(verdict("127.0.0.1:4711", "http://127.0.0.1:8080", router)).toBe("forbidden_origin");
  });
});
