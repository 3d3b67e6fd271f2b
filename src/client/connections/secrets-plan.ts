// How secrets.json changes beside config.toml: credentials with no profile are dropped (the legacy mirror with
// the legacy profile), and an interim file that holds both the old and the new credentials is written first.
import { LEGACY_SERVER_ID, type SecretsV2 } from "../../config/secrets.js";

/** The ids of the profiles the files list before and after one change. */
export interface ProfileIds {
  before: readonly string[];
  after: readonly string[];
  /** The user MCP servers' names before and after (their secrets follow them the same way). */
  userBefore?: readonly string[];
  userAfter?: readonly string[];
}

/** The secrets.json versions to write, in order, around the config.toml write (see `planSecretWrites`). */
export interface SecretWrites {
  /** Written before config.toml when it differs from the file on disk: every profile of either side has its credential. */
  interim: SecretsV2;
  /** Written after config.toml when it differs from `interim`: only the credentials of the profiles listed. */
  final: SecretsV2;
}

/** The credentials of `ids` only; the legacy mirror stays only while the legacy profile does. */
export function keepCredentialsOf(ids: readonly string[], secrets: SecretsV2): SecretsV2 {
  const wanted = new Set(ids);
  const { server, ...rest } = secrets;
  const kept: SecretsV2 = {
    ...rest,
    servers: Object.fromEntries(Object.entries(secrets.servers).filter(([id]) => wanted.has(id))),
  };
  if (server && wanted.has(LEGACY_SERVER_ID)) kept.server = server;
  return kept;
}

/**
 * A crash between any two writes leaves every profile that config.toml lists with its credential: the interim
 * secrets hold the old profiles' credentials and the new ones, config.toml moves, then the final secrets drop
 * what no profile uses any more (a disconnected server's credential, the legacy `server` mirror).
 */
export function planSecretWrites(ids: ProfileIds, old: SecretsV2, next: SecretsV2): SecretWrites {
  const final = keepUserSecretsOf(ids.userAfter, keepCredentialsOf(ids.after, next));
  const kept = keepUserSecretsOf(ids.userBefore, keepCredentialsOf(ids.before, old));
  const interim: SecretsV2 = { ...final, servers: { ...kept.servers, ...final.servers } };
  const userSecrets = { ...kept.mcp_servers, ...final.mcp_servers };
  if (Object.keys(userSecrets).length > 0) interim.mcp_servers = userSecrets;
  const mirror = final.server ?? kept.server;
  if (mirror) interim.server = mirror;
  return { interim, final };
}

/** The user servers' secrets of `names` only (all of them when the caller does not say). */
function keepUserSecretsOf(names: readonly string[] | undefined, secrets: SecretsV2): SecretsV2 {
  const { mcp_servers, ...rest } = secrets;
  if (!mcp_servers) return rest;
  const wanted = names ? new Set(names) : undefined;
  const kept = Object.entries(mcp_servers).filter(([name]) => !wanted || wanted.has(name));
  return kept.length > 0 ? { ...rest, mcp_servers: Object.fromEntries(kept) } : rest;
}

/** secrets.json as it is written. */
export function renderSecrets(secrets: SecretsV2): string {
  return `${JSON.stringify(secrets, null, 2)}\n`;
}
