// Fixed-window attempt counter per source address, so enrollment codes cannot be guessed at speed. Sources are
// client addresses (`clientAddress`): behind a trusted reverse proxy, the forwarded client, never the proxy.

import { isIP } from "node:net";

export type RateBudget = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Counts an attempt; returns the seconds to wait when the source is over its budget. */
  hit(source: string): RateBudget;
  /** Whether the source is already over its budget, without counting an attempt (for limits on failures only). */
  check(source: string): RateBudget;
}

export interface RateLimiterOptions {
  perMinute: number;
  now?: () => number;
}

/** Most windows kept at once; past it the oldest are dropped (a flood of sources costs memory, not CPU). */
const MAX_WINDOWS = 100_000;
const WINDOW_MS = 60_000;

/**
 * The bucket a source counts against: an IPv4-mapped IPv6 address is its IPv4 address, and an IPv6 address
 * counts as its /64 (one subscriber's allocation), so rotating addresses inside a prefix buys no attempts.
 */
export function rateKey(source: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(source)?.[1];
  if (mapped) return mapped;
  if (isIP(source) !== 6) return source;
  return `${expandIpv6(source).slice(0, 4).join(":")}::/64`;
}

/** The eight hextets of an IPv6 address, without leading zeros (an embedded IPv4 tail becomes two hextets). */
function expandIpv6(address: string): string[] {
  const [head = "", tail] = address.toLowerCase().split("::");
  const parts = (text: string) =>
    text === ""
      ? []
      : text.split(":").flatMap((part) => {
          if (!part.includes(".")) return [Number.parseInt(part, 16).toString(16)];
          const [a = 0, b = 0, c = 0, d = 0] = part.split(".").map(Number);
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const left = parts(head);
  const right = tail === undefined ? [] : parts(tail);
  return [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const now = options.now ?? Date.now;
  // Insertion order is window-start order: a window is re-inserted when it restarts, so expired ones sit at
  // the front and pruning stops at the first live one.
  const windows = new Map<string, { start: number; count: number }>();
  const budget = (window: { start: number; count: number }, at: number, limit: number): RateBudget =>
    window.count <= limit
      ? { allowed: true }
      : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.start + WINDOW_MS - at) / 1000)) };
  const prune = (at: number) => {
    for (const [key, window] of windows) {
      if (at - window.start < WINDOW_MS && windows.size <= MAX_WINDOWS) break;
      windows.delete(key);
    }
  };
  return {
    hit(source) {
      const at = now();
      const key = rateKey(source);
      let window = windows.get(key);
      if (!window || at - window.start >= WINDOW_MS) {
        windows.delete(key);
        window = { start: at, count: 0 };
        windows.set(key, window);
        prune(at);
      }
      window.count += 1;
      return budget(window, at, options.perMinute);
    },
    check(source) {
      const at = now();
      const window = windows.get(rateKey(source));
      if (!window || at - window.start >= WINDOW_MS) return { allowed: true };
      // The next attempt would be one more than the window holds.
      return budget({ ...window, count: window.count + 1 }, at, options.perMinute);
    },
  };
}
