// Small helpers for ivoai's own loopback HTTP listeners (the session router, AUTO's control socket).
import type http from "node:http";

export function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  res
    .writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
    .end(JSON.stringify(value));
}

/** The whole request body, or undefined when it exceeds `max` bytes (the rest is drained, not kept). */
export async function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | undefined> {
  if (Number(req.headers["content-length"] ?? "0") > max) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > max) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
