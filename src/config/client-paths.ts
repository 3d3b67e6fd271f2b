// The client's XDG layout (seed 000): config 0700 with secrets.json 0600 inside, data, state and cache.
import { homedir } from "node:os";
import path from "node:path";

export interface ClientPaths {
  configDir: string;
  configFile: string;
  secretsFile: string;
  lockFile: string;
  dataDir: string;
  stateDir: string;
  cacheDir: string;
}

export function clientPaths(env: NodeJS.ProcessEnv = process.env): ClientPaths {
  const home = env.HOME ?? homedir();
  const base = (variable: string, fallback: string) => {
    const value = env[variable];
    return value && path.isAbsolute(value) ? value : path.join(home, fallback);
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
