// Page addresses: normalised relative paths (no traversal), and the scopes pages live in.
import { IvoaiError } from "../../shared/errors.js";

export const GLOBAL_SCOPE = "_global";
const SEGMENT = /^[\p{L}\p{N}][\p{L}\p{N}._ -]*$/u;

/** `Runbooks//Deploy.md/` → `Runbooks/Deploy.md`; refuses `..`, `.`, empty or odd segments. */
export function normalizePagePath(input: string): string {
  const segments = input
    .normalize("NFC")
    .trim()
    .replace(/\\/g, "/")
    .split("/")
    .filter((segment) => segment.length > 0);
  if (segments.length === 0) throw new IvoaiError("USAGE", "a page path is required");
  for (const segment of segments) {
    if (segment === "." || segment === ".." || !SEGMENT.test(segment) || segment.length > 120) {
      throw new IvoaiError("USAGE", `invalid page path segment '${segment}'`);
    }
  }
  const path = segments.join("/");
  if (path.length > 512) throw new IvoaiError("USAGE", "page paths are limited to 512 characters");
  return path;
}

/** A project scope name (e.g. `host:laptop`, `git:acme/api`) or `_global`. */
export function normalizeScope(input: string): string {
  const scope = input.trim();
  if (!/^[\p{L}\p{N}_][\p{L}\p{N}:._/@-]{0,255}$/u.test(scope)) {
    throw new IvoaiError("USAGE", `invalid scope '${input}'`);
  }
  return scope;
}
