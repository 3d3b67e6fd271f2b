// Opens the OAuth store where server.toml says the stores live: the SQLite file under var/lib/ivoai/oauth
// (embedded default), or the `ivoai_oauth` schema of the PostgreSQL database every replica shares.
import { existsSync, promises as fs } from "node:fs";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { resolveStoreBackend } from "../store/backend.js";
import { type OAuthStore, openOAuthStore } from "./store.js";

/** The server tree's OAuth store, migrated; the caller closes it. */
export async function openOAuthStoreOf(paths: ServerPaths): Promise<OAuthStore> {
  const backend = await resolveStoreBackend(paths);
  if (backend.kind === "sqlite")
    await fs.mkdir(path.dirname(paths.oauthDb), { recursive: true, mode: 0o700 });
  return openOAuthStore(await backend.open("oauth"));
}

/** False when the server never created its OAuth store (a SQLite tree without the file). */
export async function oauthStoreExists(paths: ServerPaths): Promise<boolean> {
  const backend = await resolveStoreBackend(paths);
  return backend.kind === "postgres" || existsSync(paths.oauthDb);
}
