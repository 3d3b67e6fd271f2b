// The connection registry: server profiles in config.toml and their credentials in secrets.json, changed
// together under one cross-process lock and written atomically with private modes.
import { constants, promises as fs } from "node:fs";
import {
  type ClientConfigDocument,
  parseClientConfig,
  renderClientConfig,
  type ServerProfile,
} from "../../config/client-config.js";
import { type ClientPaths, clientPaths } from "../../config/client-paths.js";
import { emptySecrets, parseSecrets, type SecretsV2 } from "../../config/secrets.js";
import type { UserServer } from "../../config/user-mcp.js";
import { assertReplaceable, writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { createFileLock } from "../../shared/file-lock.js";
import { planSecretWrites, renderSecrets } from "./secrets-plan.js";

export interface RegistrySnapshot {
  profiles: ServerProfile[];
  /** The user's own MCP servers; their header and env values are in `secrets.mcp_servers`. */
  userServers: UserServer[];
  secrets: SecretsV2;
}

export interface ConnectionRegistry {
  paths: ClientPaths;
  read(): Promise<RegistrySnapshot>;
  /** Runs `change` on the freshest state under the lock and persists both files. */
  update<T>(change: (state: RegistrySnapshot) => T): Promise<T>;
  /**
   * Everything `update` needs short of writing: the folder, both files readable, valid and replaceable (no
   * symlink), and `check` passing on the current state. Run it before spending anything single-use.
   */
  assertWritable(check: (state: RegistrySnapshot) => void): Promise<void>;
  /** Resolves an alias (or id) to its profile. */
  find(aliasOrId: string): Promise<ServerProfile>;
  credentialOf(id: string): Promise<string | undefined>;
}

export function openRegistry(env: NodeJS.ProcessEnv = process.env): ConnectionRegistry {
  const paths = clientPaths(env);

  const ensureDir = async () => {
    await fs.mkdir(paths.configDir, { recursive: true, mode: 0o700 });
    const stat = await fs.lstat(paths.configDir);
    if (stat.isSymbolicLink() || !stat.isDirectory()) {
      throw new IvoaiError("UNSAFE_PATH", `${paths.configDir} must be a real directory`);
    }
    // Private by rule: tighten, never loosen.
    if ((stat.mode & 0o077) !== 0) await fs.chmod(paths.configDir, stat.mode & 0o700);
  };

  const loadDoc = async (): Promise<ClientConfigDocument> => {
    try {
      return parseClientConfig(await fs.readFile(paths.configFile, "utf8"), paths.configFile);
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return { raw: {}, profiles: [], userServers: [], migrated: false };
      throw error;
    }
  };

  const loadSecrets = async (): Promise<{ secrets: SecretsV2; migrated: boolean }> => {
    let text: string;
    try {
      const stat = await fs.lstat(paths.secretsFile);
      if (stat.isSymbolicLink())
        throw new IvoaiError("UNSAFE_PATH", `${paths.secretsFile} is a symbolic link`);
      if ((stat.mode & 0o077) !== 0) {
        throw new IvoaiError(
          "UNSAFE_PATH",
          `${paths.secretsFile} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`,
        );
      }
      text = await fs.readFile(paths.secretsFile, "utf8");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return { secrets: emptySecrets(), migrated: false };
      throw error;
    }
    try {
      return parseSecrets(JSON.parse(text));
    } catch (error) {
      throw new IvoaiError("CONFIG_INVALID", `${paths.secretsFile}: ${(error as Error).message}`);
    }
  };

  const read = async (): Promise<RegistrySnapshot> => {
    const [doc, { secrets }] = await Promise.all([loadDoc(), loadSecrets()]);
    return { profiles: doc.profiles, userServers: doc.userServers, secrets };
  };

  const underLock = async <T>(run: () => Promise<T>): Promise<T> => {
    await ensureDir();
    const lock = createFileLock(paths.lockFile);
    try {
      return await lock.withLock(run);
    } finally {
      lock.close();
    }
  };

  const writePrivate = (file: string, text: string) => writeFileAtomic(file, text, { mode: 0o600 });

  return {
    paths,
    read,
    update: (change) =>
      underLock(async () => {
        const doc = await loadDoc();
        const { secrets } = await loadSecrets();
        const state = {
          profiles: doc.profiles.map((profile) => ({ ...profile })),
          userServers: structuredClone(doc.userServers),
          secrets: structuredClone(secrets),
        };
        const result = change(state);
        const ids = (profiles: readonly ServerProfile[]) => profiles.map((profile) => profile.id);
        const writes = planSecretWrites(
          {
            before: ids(doc.profiles),
            after: ids(state.profiles),
            userBefore: doc.userServers.map((server) => server.name),
            userAfter: state.userServers.map((server) => server.name),
          },
          secrets,
          state.secrets,
        );
        // Credentials first: a consumed enrollment code must never leave its credential unsaved, and a profile
        // config.toml lists always has its credential, whenever a crash comes.
        const onDisk = renderSecrets(secrets);
        const interim = renderSecrets(writes.interim);
        if (interim !== onDisk) await writePrivate(paths.secretsFile, interim);
        await writePrivate(paths.configFile, renderClientConfig(doc, state.profiles, state.userServers));
        const final = renderSecrets(writes.final);
        if (final !== interim) await writePrivate(paths.secretsFile, final);
        return result;
      }),
    assertWritable: (check) =>
      underLock(async () => {
        const doc = await loadDoc();
        const { secrets } = await loadSecrets();
        check({ profiles: doc.profiles, userServers: doc.userServers, secrets });
        await assertReplaceable(paths.configFile);
        await assertReplaceable(paths.secretsFile);
        await fs.access(paths.configDir, constants.W_OK).catch((error: unknown) => {
          throw new IvoaiError("UNSAFE_PATH", `${paths.configDir} is not writable`, { cause: error });
        });
      }),
    async find(aliasOrId) {
      const { profiles } = await read();
      const profile = profiles.find((entry) => entry.alias === aliasOrId || entry.id === aliasOrId);
      if (!profile)
        throw new IvoaiError(
          "NOT_FOUND",
          `no server profile named ${aliasOrId} (see 'ivoai connect server list')`,
        );
      return profile;
    },
    async credentialOf(id) {
      return (await loadSecrets()).secrets.servers[id]?.credential;
    },
  };
}
