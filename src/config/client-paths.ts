// The client's XDG layout (seed 000): config 0700 with secrets.json 0600 inside, data, state and cache.
import { homedir } from "node:os";
import path from "node:path";
import { IvoaiError } from "../shared/errors.js";

export interface ClientPaths {
  configDir: string;
  configFile: string;
  secretsFile: string;
  lockFile: string;
  dataDir: string;
  stateDir: string;
  cacheDir: string;
}

/** $HOME when absolute, else the account's home; never a relative path (it would resolve against the cwd). */
function homeDir(env: NodeJS.ProcessEnv): string {
  if (env.HOME && path.isAbsolute(env.HOME)) return env.HOME;
  const fallback = homedir();
  if (fallback && path.isAbsolute(fallback)) return fallback;
  throw new IvoaiError(
    "UNSAFE_PATH",
    `HOME is not an absolute path (${JSON.stringify(env.HOME ?? "")}) and no home directory was found: ` +
      "set HOME (or the XDG_*_HOME variables) to absolute paths",
  );
}

/** Every path is absolute; throws UNSAFE_PATH when a needed home directory is not. */
export function clientPaths(env: NodeJS.ProcessEnv = process.env): ClientPaths {
  const base = (variable: string, fallback: string) => {
    const value = env[variable];
    return value && path.isAbsolute(value) ? value : path.join(homeDir(env), fallback);
  };
  const configDir = path.join(base("XDG_CONFIG_HOME", ".config"), "ivoai");
  return {
    configDir,
    configFile: path.join(configDir, "config.toml"),
    secretsFile: path.join(configDir, "secrets.json"),
    lockFile: path.join(configDir, "config.lock"),
    dataDir: path.join(base("XDG_DATA_HOME", ".local/share"), "ivoai"),
    stateDir: path.join(base("XDG_STATE_HOME", ".local/state"), "ivoai"),
    cacheDir: path.join(base("XDG_CACHE_HOME", ".cache"), "ivoai"),
  };
}
