// Serves the built web console at /console from memory: SPA routes get index.html, hashed assets are cached
// for good, every response carries the console's strict CSP. Files are compressed once, when the server starts.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { type Context, Hono } from "hono";
import type { GatewayEnv } from "../http/env.js";
import { problem } from "../http/problem.js";
import { BUNDLED_CONSOLE_ASSETS, type BundledAsset } from "./bundled-assets.js";

/** No inline script or style, nothing from another origin, never framed. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const MEDIA_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

export function mediaTypeOf(file: string): string {
  return MEDIA_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream";
}

interface PreparedFile {
  type: string;
  body: Uint8Array;
  etag: string;
  /** Present when compressing pays. */
  gzip?: { body: Uint8Array; etag: string };
}

export type ConsoleSite =
  | { available: true; files: ReadonlyMap<string, PreparedFile> }
  | { available: false; reason: string };

function prepare(files: Iterable<[string, { type: string; body: Buffer }]>): Map<string, PreparedFile> {
  const prepared = new Map<string, PreparedFile>();
  for (const [name, file] of files) {
    const tag = createHash("sha256").update(file.body).digest("base64url").slice(0, 27);
    const entry: PreparedFile = { type: file.type, body: file.body, etag: `"${tag}"` };
    const compressible = /^(text\/|application\/json|image\/svg)/.test(file.type);
    if (compressible && file.body.length > 256) {
      const gzip = gzipSync(file.body, { level: 9 });
      if (gzip.length < file.body.length) entry.gzip = { body: gzip, etag: `"${tag}-gz"` };
    }
    prepared.set(name, entry);
  }
  return prepared;
}

/** The built console of a source checkout (repo/dist/console), used when this is not the bundled binary. */
const DISK_DIR = fileURLToPath(new URL("../../../dist/console/", import.meta.url));

function readDir(dir: string): [string, { type: string; body: Buffer }][] {
  return (readdirSync(dir, { recursive: true, encoding: "utf8" }) as string[])
    .map((name) => name.split(path.sep).join("/"))
    .filter((name) => statSync(path.join(dir, name)).isFile())
    .map((name) => [name, { type: mediaTypeOf(name), body: readFileSync(path.join(dir, name)) }]);
}

/**
 * The console's files: the ones bundled into the binary, else a source checkout's dist/console, else none
 * (the console answers 503 until `npm run build` ran).
 */
export function loadConsoleSite(
  bundled: Readonly<Record<string, BundledAsset>> | undefined = BUNDLED_CONSOLE_ASSETS,
  dir: string = DISK_DIR,
): ConsoleSite {
  if (bundled) {
    return {
      available: true,
      files: prepare(
        Object.entries(bundled).map(([name, asset]) => [
          name,
          { type: mediaTypeOf(name), body: Buffer.from(asset.body, asset.encoding) },
        ]),
      ),
    };
  }
  if (!existsSync(path.join(dir, "index.html"))) {
    return { available: false, reason: `${dir} has no index.html` };
  }
  return { available: true, files: prepare(readDir(dir)) };
}

let defaultSite: ConsoleSite | undefined;
/** This binary's console, prepared (hashed, compressed) once per process however many apps are built. */
export function defaultConsoleSite(): ConsoleSite {
  defaultSite ??= loadConsoleSite();
  return defaultSite;
}

function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(",").some((part) => {
    const [coding = "", ...params] = part.trim().toLowerCase().split(";");
    if (coding.trim() !== "gzip" && coding.trim() !== "*") return false;
    const q = params.map((param) => param.trim()).find((param) => param.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header
    .split(",")
    .map((value) => value.trim().replace(/^W\//, ""))
    .some((value) => value === etag || value === "*");
}

function securityHeaders(c: Context<GatewayEnv>): void {
  c.header("Content-Security-Policy", CONSOLE_CSP);
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "no-referrer");
}

/** GET / (redirect), /console and everything under it. */
export function createConsoleSiteRoutes(site: ConsoleSite): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.get("/", (c) => c.redirect("/console/", 302));

  const serve = (c: Context<GatewayEnv>) => {
    securityHeaders(c);
    if (!site.available) {
      return problem(
        c,
        503,
        "console_unavailable",
        "the web console was not built into this server: run `npm run build` in the ivoai checkout",
      );
    }
    const rest = c.req.path === "/console" ? "" : c.req.path.slice("/console/".length);
    const isAsset = rest.startsWith("assets/");
    const own = rest !== "" && rest !== "index.html" ? site.files.get(rest) : undefined;
    if (isAsset && !own) return problem(c, 404, "not_found", "no such console asset");
    // Anything that is not a file is a route of the single-page app: index.html routes it in the browser.
    const name = own ? rest : "index.html";
    const file = own ?? site.files.get("index.html");
    if (!file) return problem(c, 404, "not_found", "no such console file");
    c.header(
      "Cache-Control",
      isAsset ? "public, max-age=31536000, immutable" : name === "index.html" ? "no-store" : "no-cache",
    );
    c.header("Vary", "Accept-Encoding");
    const variant = file.gzip && acceptsGzip(c.req.header("accept-encoding")) ? file.gzip : undefined;
    const etag = variant?.etag ?? file.etag;
    c.header("ETag", etag);
    if (etagMatches(c.req.header("if-none-match"), etag)) return c.body(null, 304);
    c.header("Content-Type", file.type);
    if (variant) c.header("Content-Encoding", "gzip");
    return c.body((variant ?? file).body as Uint8Array<ArrayBuffer>, 200);
  };
  app.get("/console", serve);
  app.get("/console/*", serve);
  return app;
}
