// Fixed-window attempt counter per source address, so enrollment codes cannot be guessed at speed.

export interface RateLimiter {
  /** Counts an attempt; returns the seconds to wait when the source is over its budget. */
  hit(source: string): { allowed: true } | { allowed: false; retryAfterSeconds: number };
}

export interface RateLimiterOptions {
  perMinute: number;
  now?: () => number;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const now = options.now ?? Date.now;
  const windows = new Map<string, { start: number; count: number }>();
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
      if (window.count <= options.perMinute) return { allowed: true };
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((window.start + 60_000 - at) / 1000)),
      };
    },
  };
}
