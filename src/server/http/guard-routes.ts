// Puts a sub-app's routes, and only them, behind one authentication middleware: each sub-app declares its own
// auth instead of the gateway deciding by path prefix. Hono scopes a sub-app's `use("*")` to its whole mount
// point, so the guard is registered on exactly the paths the sub-app's routes (and middleware) declare.
import { Hono, type MiddlewareHandler } from "hono";
import type { GatewayEnv } from "./env.js";

/** `routes` behind `auth`: run once per request, before any of its handlers, on no other path. */
export function guardRoutes(routes: Hono<GatewayEnv>, auth: MiddlewareHandler<GatewayEnv>): Hono<GatewayEnv> {
  const guarded = new Hono<GatewayEnv>();
  // A path can match several of the routes' patterns (`/counts` and `/:id`): authenticate once.
  const checked = new WeakSet<object>();
  const once: MiddlewareHandler<GatewayEnv> = async (c, next) => {
    if (checked.has(c)) return next();
    checked.add(c);
    return auth(c, next);
  };
  for (const path of new Set(routes.routes.map((route) => route.path))) guarded.use(path, once);
  guarded.route("/", routes);
  return guarded;
}
