// Pure OAuth validators: no clock, no I/O; each returns a tagged result, and one switch maps failures to wire errors.
import { createHash } from "node:crypto";
import { hasUnsafeCharacters } from "../../shared/terminal-text.js";
import { isLoopbackHost } from "../http/listener-policy.js";

export const WEB_SCOPES = ["context:read", "memory:read", "memory:write", "memory:delete"] as const;
export const DEFAULT_WEB_SCOPES = ["context:read", "memory:read"];

export type Result<T, E extends string> =
  | { ok: true; value: T }
  | { ok: false; error: E; description: string };

/** The loopback hosts a redirect may name, exactly as written: 127.1, 0x7f000001 and the like are refused. */
const CANONICAL_LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Whether an http URI names its loopback host in one of the canonical forms. The URL parser turns 127.1,
 * 0x7f000001, 2130706433 or 0177.0.0.1 into 127.0.0.1, so the host is read from the text itself.
 */
function hasCanonicalLoopbackHost(uri: string): boolean {
  const authority = /^http:\/\/([^/?#]*)/i.exec(uri)?.[1];
  if (authority === undefined) return false;
  const host = authority.replace(/:\d{1,5}$/, "");
  return CANONICAL_LOOPBACK_HOSTS.has(host);
}

/**
 * Whether `uri` is the WHATWG serialisation of its parse, the only leeway being the root path an origin-only
 * URI gains (`https://a.example` is `https://a.example/`: the same target, and it may be written either way).
 */
function isCanonical(uri: string, url: URL): boolean {
  if (url.href === uri) return true;
  return url.pathname === "/" && !url.search && url.href === `${uri}/`;
}

/**
 * RFC 8252 loopback http (127.0.0.1, [::1] or localhost, any port), or https with a host; written in canonical
 * form; no fragment, no user-info, no other scheme.
 */
export function validateRedirectUri(uri: unknown): Result<string, "invalid_redirect_uri"> {
  const fail = (description: string) => ({
    ok: false as const,
    error: "invalid_redirect_uri" as const,
    description,
  });
  if (typeof uri !== "string" || uri.length > 2048) return fail("redirect URIs must be strings");
  // Registered text reaches operators' terminals and the consent page: the set the CLI escapes is refused.
  if (hasUnsafeCharacters(uri)) return fail("redirect URIs may not contain control or bidi characters");
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return fail(`not a URL: ${uri.slice(0, 100)}`);
  }
  if (url.hash || uri.includes("#")) return fail("redirect URIs may not have a fragment");
  if (url.username || url.password) return fail("redirect URIs may not carry user-info");
  // The consent page shows the URI as registered and the redirect later must match it exactly, so it must be
  // what a browser will go to: `https:evil.example`, `HTTPS://X`, `https:\\x` or `/a b` are refused, not fixed.
  if (!isCanonical(uri, url))
    return fail(`redirect URIs must be written in canonical form: ${url.href.slice(0, 200)}`);
  if (url.protocol === "https:" && url.hostname) return { ok: true, value: uri };
  if (url.protocol === "http:" && isLoopbackHost(url.hostname) && hasCanonicalLoopbackHost(uri))
    return { ok: true, value: uri };
  return fail("redirect URIs must be https, or http on 127.0.0.1, [::1] or localhost");
}

/** Exact match, except that a loopback redirect may use any port (RFC 8252 §7.3). */
export function redirectMatches(registered: readonly string[], requested: string): boolean {
  return registered.some((candidate) => {
    if (candidate === requested) return true;
    if (!hasCanonicalLoopbackHost(requested)) return false;
    try {
      const a = new URL(candidate);
      const b = new URL(requested);
      return (
        a.protocol === "http:" &&
        isLoopbackHost(a.hostname) &&
        isCanonical(requested, b) &&
        a.protocol === b.protocol &&
        a.hostname === b.hostname &&
        a.pathname === b.pathname &&
        a.search === b.search
      );
    } catch {
      return false;
    }
  });
}

export function parseScopes(text: string | undefined): Result<string[], "invalid_scope"> {
  if (!text?.trim()) return { ok: true, value: [...DEFAULT_WEB_SCOPES] };
  const scopes = [...new Set(text.split(/\s+/).filter(Boolean))];
  const unknown = scopes.filter((scope) => !(WEB_SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0)
    return { ok: false, error: "invalid_scope", description: `unknown scope ${unknown.join(" ")}` };
  return { ok: true, value: scopes };
}

/** PKCE S256: BASE64URL(SHA256(verifier)) equals the challenge (RFC 7636 §4.6). */
export function verifyPkce(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  return createHash("sha256").update(verifier).digest("base64url") === challenge;
}

/** Normalises a resource indicator for comparison: the canonical /mcp URL, no trailing slash. */
export function sameResource(requested: string | undefined, canonical: string): boolean {
  if (!requested) return false;
  // A loop, not /\/+$/: that regex is quadratic on a long run of slashes followed by another character.
  let end = requested.length;
  while (end > 0 && requested.charCodeAt(end - 1) === 47) end--;
  return requested.slice(0, end) === canonical;
}
