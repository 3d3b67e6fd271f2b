// DNS-rebinding protection for every MCP endpoint (gateway and session router): the Host must be one this
// service answers to and a browser Origin, when sent, must be its own, whatever credential comes with it.
import { isLoopbackHost } from "./loopback.js";

export interface OriginPolicyOptions {
  /** The origin clients are told to use, e.g. https://ai.example.com or http://127.0.0.1:4711. */
  publicOrigin: string;
  /** Also accept loopback names (127.x, localhost, ::1): on any port, or on `port` only when given. */
  loopback?: { port?: number };
}

export type OriginVerdict =
  | { ok: true }
  | { ok: false; error: "forbidden_host" | "forbidden_origin"; message: string };

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443" };

/** Checks the Host and Origin headers of one request against the policy. */
export function checkOrigin(
  headers: { host: string | undefined; origin: string | undefined },
  options: OriginPolicyOptions,
): OriginVerdict {
  const self = new URL(options.publicOrigin);
  const host = headers.host?.trim() ?? "";
  const asUrl = HOST.test(host) ? parse(`${self.protocol}//${host}`) : undefined;
  if (!asUrl || !allowed(asUrl, self, options)) {
    return { ok: false, error: "forbidden_host", message: "requests for this host name are not accepted" };
  }
  if (headers.origin !== undefined) {
    const origin = parse(headers.origin);
    if (!origin || origin.origin === "null" || !allowed(origin, self, options)) {
      return { ok: false, error: "forbidden_origin", message: "requests from this origin are not accepted" };
    }
  }
  return { ok: true };
}

function allowed(url: URL, self: URL, options: OriginPolicyOptions): boolean {
  const port = url.port || DEFAULT_PORTS[url.protocol] || "";
  if (url.protocol === self.protocol && url.hostname === self.hostname) {
    if (port === (self.port || DEFAULT_PORTS[self.protocol])) return true;
  }
  const loopback = options.loopback;
  if (!loopback || !isLoopbackHost(url.hostname)) return false;
  return loopback.port === undefined || port === String(loopback.port);
}

function parse(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
