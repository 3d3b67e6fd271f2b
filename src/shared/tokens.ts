// Secret values (codes, credentials) and the hashes and ids that stand for them.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A 256-bit secret from the OS CSPRNG, base64url, behind a prefix that makes it recognisable for redaction. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString("base64url")}`;
}

const POOL_IDS = 512;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * A short non-secret identifier: the prefix and 16 hex digits, unpredictable. The random bytes come from a pooled
 * buffer (one getrandom call per 512 ids: request ids are made on every request).
 */
export function newId(prefix: string): string {
  if (offset >= pool.length) {
    pool = randomBytes(8 * POOL_IDS);
    offset = 0;
  }
  offset += 8;
  return `${prefix}${pool.toString("hex", offset - 8, offset)}`;
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

/**
 * Finds the entry whose hash equals `sha256(secret)`, comparing every entry in constant time
 * so that neither the position of a match nor a near-miss shows in the timing.
 */
export function findByHash<T>(
  entries: readonly T[],
  secret: string,
  hashOf: (entry: T) => string,
): T | undefined {
  const wanted = Buffer.from(sha256Hex(secret), "hex");
  let found: T | undefined;
  for (const entry of entries) {
    const candidate = Buffer.from(hashOf(entry), "hex");
    if (candidate.length === wanted.length && timingSafeEqual(candidate, wanted) && found === undefined) {
      found = entry;
    }
  }
  return found;
}

/** Whether two secrets are equal, in time that does not depend on where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
