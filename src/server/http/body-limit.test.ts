import { once } from "node:events";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyLimit } from "./body-limit.js";
import type { GatewayEnv } from "./env.js";

describe("body limit", () => {
  let server: ServerType;
  let port: number;
  beforeAll(async () => {
    const app = new Hono<GatewayEnv>();
    app.use(bodyLimit({ maxSize: 16, onError: (c) => c.text("too large", 413) }));
    app.all("/", async (c) => c.text(`got ${(await c.req.text()).length}`));
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** One request with the body sent as one chunk (Content-Length) or chunked (no length). */
  const send = (method: string, body: string, chunked = false) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, method, path: "/" }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      if (!chunked) req.setHeader("content-length", Buffer.byteLength(body));
      if (body) req.write(body);
      req.end();
    });

  it("passes a body within the limit, declared or chunked", async () => {
    expect(await send("POST", "0123456789abcdef")).toEqual({ status: 200, text: "got 16" });
    expect(await send("POST", "0123456789", true)).toEqual({ status: 200, text: "got 10" });
    expect(await send("GET", "")).toEqual({ status: 200, text: "got 0" });
  });

  it("refuses a declared or a streamed body past the limit", async () => {
    expect(await send("POST", "0123456789abcdefg")).toEqual({ status: 413, text: "too large" });
    expect(await send("PUT", "0123456789abcdefg", true)).toEqual({ status: 413, text: "too large" });
  });
});
