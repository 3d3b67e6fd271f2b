// Whether a host name or address is loopback: the one place plaintext HTTP is acceptable (seed 000).
import { isIP } from "node:net";

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare === "::1") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  return bare.startsWith("::ffff:127.");
}
