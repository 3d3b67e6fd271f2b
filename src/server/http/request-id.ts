// Request ids for log lines: random like newId("req_"), drawn from a pooled buffer instead of a
// getrandom call per request.
import { randomBytes } from "node:crypto";

const POOL_IDS = 512;
let pool = Buffer.alloc(0);
let offset = 0;

/** `req_` and 16 hex digits, unpredictable and non-secret (the same shape as `newId("req_")`). */
export function newRequestId(): string {
  if (offset >= pool.length) {
    pool = randomBytes(8 * POOL_IDS);
    offset = 0;
  }
  offset += 8;
  return `req_${pool.toString("hex", offset - 8, offset)}`;
}
