import { describe, expect, it } from "vitest";
import {
  createCidrMatcher,
  evaluateListener,
  isLoopbackHost,
  normalizePublicUrl,
  parseListen,
} from "./listener-policy.js";

describe("listener rules", () => {
  it("allows plaintext only on loopback unless TLS or a reverse proxy is configured", () => {
    const plain = (host: string) =>
      evaluateListener({ listen: { host, port: 1 }, tls: false, trustedProxyCidrs: [] });
    expect(plain("127.0.0.1")).toBe("loopback");
    expect(plain("::1")).toBe("loopback");
    expect(plain("localhost")).toBe("loopback");
    expect(() => plain("0.0.0.0")).toThrow(/refusing plaintext listener/);
    expect(() => plain("::")).toThrow(/refusing plaintext listener/);
    expect(() => plain("192.168.1.5")).toThrow(/configure TLS/);
    expect(evaluateListener({ listen: { host: "0.0.0.0", port: 1 }, tls: true, trustedProxyCidrs: [] })).toBe(
      "tls",
    );
    expect(
      evaluateListener({
        listen: { host: "0.0.0.0", port: 1 },
        tls: false,
        trustedProxyCidrs: ["10.0.0.0/8"],
      }),
    ).toBe("reverse-proxy");
    expect(() =>
      evaluateListener({
        listen: { host: "0.0.0.0", port: 1 },
        tls: false,
        trustedProxyCidrs: ["10.0.0.0/33"],
      }),
    ).toThrow(/invalid CIDR/);
  });

  it("matches proxy sources by CIDR, including IPv4-mapped IPv6 peers", () => {
    const trusted = createCidrMatcher(["10.1.0.0/16", "fd00::/8"]);
    expect(trusted("10.1.2.3")).toBe(true);
    expect(trusted("::ffff:10.1.2.3")).toBe(true);
    expect(trusted("10.2.0.1")).toBe(false);
    expect(trusted("fd12::1")).toBe(true);
    expect(trusted("unknown")).toBe(false);
  });

  it("parses listen addresses and public URLs strictly", () => {
    expect(parseListen("127.0.0.1:0")).toEqual({ host: "127.0.0.1", port: 0 });
    expect(parseListen("[::1]:8787")).toEqual({ host: "::1", port: 8787 });
    expect(() => parseListen("8787")).toThrow(/HOST:PORT/);
    expect(() => parseListen("host:99999")).toThrow(/HOST:PORT/);
    expect(isLoopbackHost("127.8.9.1")).toBe(true);
    expect(normalizePublicUrl("https://ai.example.com/")).toBe("https://ai.example.com");
    expect(normalizePublicUrl("http://127.0.0.1:8787")).toBe("http://127.0.0.1:8787");
    expect(() => normalizePublicUrl("http://ai.example.com")).toThrow(/https/);
    expect(() => normalizePublicUrl("https://user:pw@ai.example.com")).toThrow(/origin/);
    expect(() => normalizePublicUrl("https://ai.example.com/base?x=1")).toThrow(/origin/);
  });
});
