// Fast HTTP forwarding for a single-source endpoint: one keep-alive connection pool per router, the upstream
// credential only ever sent to its own origin, redirects refused, a deadline over the whole exchange and a
// cap on the response size.
import http from "node:http";
import https from "node:https";

export interface ForwardOptions {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  timeoutMs: number;
  maxResponseBytes: number;
}

export interface Forwarded {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export class ForwardError extends Error {}

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

export function forward(options: ForwardOptions): Promise<Forwarded> {
  const url = new URL(options.url);
  const secure = url.protocol === "https:";
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(
      url,
      {
        method: options.method,
        headers: {
          ...options.headers,
          ...(options.body ? { "content-length": String(options.body.length) } : {}),
        },
        agent: secure ? agents.https : agents.http,
      },
      (response) => {
        const status = response.statusCode ?? 502;
        if (status >= 300 && status < 400) {
          response.resume();
          fail(new ForwardError(`refused a redirect from ${url.origin}`));
          return;
        }
        const chunks: Buffer[] = [];
        let total = 0;
        response.on("data", (chunk: Buffer) => {
          total += chunk.length;
          if (total > options.maxResponseBytes) {
            response.destroy();
            fail(
              new ForwardError(`${url.origin} answered more than the ${options.maxResponseBytes}-byte limit`),
            );
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () => {
          clearTimeout(timer);
          const headers: Record<string, string> = {};
          for (const name of ["content-type", "mcp-session-id", "mcp-protocol-version"]) {
            const value = response.headers[name];
            if (typeof value === "string") headers[name] = value;
          }
          resolve({ status, headers, body: Buffer.concat(chunks) });
        });
        response.on("error", (error) => fail(error));
      },
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      request.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new ForwardError(`${url.origin} did not answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    request.on("error", (error) => fail(error));
    request.end(options.body);
  });
}
