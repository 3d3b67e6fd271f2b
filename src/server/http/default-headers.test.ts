import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { setDefaultHeaders } from "./default-headers.js";
import type { GatewayEnv } from "./env.js";

describe("default response headers", () => {
  const app = new Hono<GatewayEnv>();
  app.use(async (c, next) => {
    await next();
    setDefaultHeaders(c);
  });
  app.get("/json", (c) => c.json({ ok: true }));
  app.get("/raw", () => new Response("raw", { headers: { "Content-Type": "text/plain" } }));
  app.get("/cached", (c) => c.text("static", 200, { "Cache-Control": "public, max-age=60" }));
  app.get("/redirect", () => Response.redirect("https://example.com/next", 302));

  it.each(["/json", "/raw", "/redirect"])("marks %s no-store and nosniff", async (path) => {
    const response = await app.request(path);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("keeps a route's own caching and its body", async () => {
    const response = await app.request("/cached");
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await response.text()).toBe("static");
    expect(await (await app.request("/raw")).text()).toBe("raw");
  });
});
