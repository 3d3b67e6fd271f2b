// Fixed-window attempt counter per source address, so enrollment codes cannot be guessed at speed. Sources are
// client addresses (`clientAddress`): behind a trusted reverse proxy, the forwarded client, never the proxy.

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

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const now = options.now ?? Date.now;
  const windows = new Map<string, { start: number; count: number }>();
  const budget = (window: { start: number; count: number }, at: number, limit: number): RateBudget =>
    window.count <= limit
      ? { allowed: true }
      : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.start + 60_000 - at) / 1000)) };
  return {
    hit(source) {
      const at = now();
      if (windows.size > 10_000) {
        for (const [key, window] of windows) if (at - window.start >= 60_000) windows.delete(key);
      }
      let window = windows.get(source);
      if (!window || at - window.start >= 60_000) {
        window = { start: at, count: 0 };
        windows.set(source, window);
      }
      window.count += 1;
      return budget(window, at, options.perMinute);
    },
    check(source) {
      const at = now();
      const window = windows.get(source);
      if (!window || at - window.start >= 60_000) return { allowed: true };
      // The next attempt would be one more than the window holds.
      return budget({ ...window, count: window.count + 1 }, at, options.perMinute);
    },
  };
}
