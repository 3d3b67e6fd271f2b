// The seed's listener rules: plaintext only on loopback or behind a declared reverse proxy; otherwise TLS.
import { BlockList, isIP } from "node:net";
import { IvoaiError } from "../../shared/errors.js";
import { isLoopbackHost } from "../../shared/loopback.js";

export { isLoopbackHost };

export interface ListenAddress {
  host: string;
  port: number;
}

export type ListenerMode = "loopback" | "reverse-proxy" | "tls";

export interface ListenerInput {
  listen: ListenAddress;
  tls: boolean;
  trustedProxyCidrs: readonly string[];
}

/** Parses `HOST:PORT` or `[IPv6]:PORT`; port 0 asks the OS for a free port. */
export function parseListen(text: string): ListenAddress {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text.trim());
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!host || !Number.isInteger(port) || port > 65_535) {
    throw new IvoaiError("USAGE", `invalid listen address '${text}': use HOST:PORT, e.g. 127.0.0.1:8787`);
  }
  return { host, port };
}

export function formatListen(address: ListenAddress): string {
  return isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

/** Decides how a listener may serve, or refuses it with the reason and the fix. */
export function evaluateListener(input: ListenerInput): ListenerMode {
  if (input.tls) return "tls";
  if (input.trustedProxyCidrs.length > 0) {
    createCidrMatcher(input.trustedProxyCidrs);
    return "reverse-proxy";
  }
  if (isLoopbackHost(input.listen.host)) return "loopback";
  throw new IvoaiError(
    "LISTENER_REFUSED",
    `refusing plaintext listener on ${formatListen(input.listen)}: it is not loopback; configure TLS (--tls-cert and --tls-key) or a trusted reverse-proxy CIDR (--trusted-proxy)`,
  );
}

/** A matcher for the trusted proxy source ranges; invalid CIDRs are refused up front. */
export function createCidrMatcher(cidrs: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [base, bits, extra] = cidr.split("/");
    const family = base ? isIP(base) : 0;
    const prefix = Number(bits);
    const max = family === 6 ? 128 : 32;
    if (
      !base ||
      family === 0 ||
      extra !== undefined ||
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > max
    ) {
      throw new IvoaiError("USAGE", `invalid CIDR '${cidr}': use e.g. 10.0.0.0/8 or fd00::/8`);
    }
    list.addSubnet(base, prefix, family === 6 ? "ipv6" : "ipv4");
  }
  return (address) => {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const bare = mapped ?? address;
    const family = isIP(bare);
    if (family === 0) return false;
    return list.check(bare, family === 6 ? "ipv6" : "ipv4");
  };
}

/**
 * Normalises the public base URL: an origin (no path, query, fragment or user-info), https unless
 * the host is loopback.
 */
export function normalizePublicUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new IvoaiError("USAGE", `invalid public URL '${text}'`);
  }
  if (
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    (url.pathname !== "/" && url.pathname !== "")
  ) {
    throw new IvoaiError("USAGE", `public URL must be an origin like https://ai.example.com (got '${text}')`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    throw new IvoaiError("USAGE", `public URL must use https unless its host is loopback (got '${text}')`);
  }
  return url.origin;
}
