// A loopback proxy that adds a bearer to every request, for MCP test suites that cannot send headers (the
// conformance CLI 0.1.13 has no header option). The secret stays in this process: never in a URL, argv or log.
import http from "node:http";

export interface BearerProxy {
  /** The proxy's origin, e.g. http://127.0.0.1:41234 (append the target's path). */
  url: string;
  close(): Promise<void>;
}

export interface BearerProxyOptions {
  /** Origin of the real server, e.g. http://127.0.0.1:8080. */
  target: string;
  token: string;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are not forwarded.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/**
 * Starts the proxy on 127.0.0.1:0. Bodies stream both ways (SSE responses arrive as they are written).
 * Host and Origin are rewritten to the target only when they name the proxy itself; anything else (a
 * DNS-rebinding probe's evil.example.com) reaches the target untouched, so its own origin guard answers.
 */
export async function startBearerProxy(options: BearerProxyOptions): Promise<BearerProxy> {
  const target = new URL(options.target);
  let own = new Set<string>();
  const server = http.createServer((req, res) => {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    if (typeof req.headers.host === "string" && own.has(req.headers.host.toLowerCase()))
      headers.host = target.host;
    const origin = req.headers.origin?.toLowerCase();
    if (origin?.startsWith("http://") && own.has(origin.slice("http://".length)))
      headers.origin = target.origin;
    headers.authorization = `Bearer ${options.token}`;
    const upstream = http.request(
      {
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
      },
      (answer) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value;
        }
        res.writeHead(answer.statusCode ?? 502, back);
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end("proxy: the target did not answer");
    });
    // The client went away (e.g. it closed an SSE stream): stop the upstream exchange too.
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  own = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
