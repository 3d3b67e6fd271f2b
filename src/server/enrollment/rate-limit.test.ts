import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { createRateLimiter, rateKey } from "./rate-limit.js";

describe("rate limiter", () => {
  it("counts an IPv6 /64 as one source and an IPv4-mapped address as its IPv4 address", () => {
    expect(rateKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(rateKey("2001:0db8:0001:0002:ffff:1:2:3")).toBe("2001:db8:1:2::/64");
    expect(rateKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(rateKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(rateKey("203.0.113.7")).toBe("203.0.113.7");
    expect(rateKey("unparsed:unknown")).toBe("unparsed:unknown");

    const limiter = createRateLimiter({ perMinute: 3, now: () => 1_000 });
    // An attacker rotating through addresses of one /64 runs out like one address.
    const answers = [1, 2, 3, 4].map((n) => limiter.hit(`2001:db8:1:2::${n}`).allowed);
    expect(answers).toEqual([true, true, true, false]);
    expect(limiter.hit("2001:db8:1:3::1").allowed).toBe(true);
    for (let n = 0; n < 3; n += 1) limiter.hit("::ffff:198.51.100.9");
    expect(limiter.check("198.51.100.9").allowed).toBe(false);
  });

  it("keeps a flood of sources bounded and fast, and forgets expired windows", () => {
    let at = 0;
    const limiter = createRateLimiter({ perMinute: 1, now: () => at });
    limiter.hit("203.0.113.1");
    expect(limiter.check("203.0.113.1").allowed).toBe(false);
    const flood = () => {
      for (let n = 0; n < 150_000; n += 1) limiter.hit(`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`);
    };
    // 150,000 new sources take well under a second of CPU when linear; scanning every live window on every hit
    // (the old pruning) takes minutes. One round: a second one would find the sources already there.
    expect(cpuMs(flood, 1)).toBeLessThan(10_000);
    at = 61_000;
    expect(limiter.check("203.0.113.1").allowed).toBe(true);
    expect(limiter.hit("203.0.113.1").allowed).toBe(true);
  });
});
