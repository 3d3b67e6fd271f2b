// Components installed from a full lock compiled into ivoai (manifest/locks/NAME, written by
// scripts/component-lock.mjs): `npm ci --ignore-scripts --omit=optional` into GENERATION/NAME, so nothing npm
// resolves at install time can differ from the reviewed tree, no lifecycle script runs, and the optional
// native and model packages (tools outside what ivoai calls) are not fetched. Each is then checked its own way.
import { promises as fs } from "node:fs";
import path from "node:path";
import { IvoaiError } from "../../shared/errors.js";
import { checkRufloIntegrity } from "../auto/ruflo.js";
import type { LockedEntry, LockedName } from "./catalogue.js";
import { type NpmRunOptions, runNpm } from "./npm.js";

export interface LockFiles {
  packageJson: unknown;
  lock: { packages: Record<string, { name?: string; version?: string; integrity?: string }> };
}

interface Locked {
  /** Loaded only when installing: the lock is large, and a launch never needs it. */
  files(): Promise<LockFiles>;
  /** Throws when the installed tree is not the reviewed release. */
  verify(dir: string): Promise<void>;
}

const LOCKS: Record<LockedName, Locked> = {
  ruflo: {
    files: async () => ({
      packageJson: (await import("../../../manifest/locks/ruflo/package.json", { with: { type: "json" } }))
        .default,
      lock: (await import("../../../manifest/locks/ruflo/package-lock.json", { with: { type: "json" } }))
        .default as LockFiles["lock"],
    }),
    async verify(dir) {
      // The same check AUTO's admission makes: both entry points byte for byte, the pinned inner CLI.
      await checkRufloIntegrity(path.join(dir, "node_modules", ".bin", "ruflo"));
    },
  },
};

/** Where a locked component lives inside a generation. */
export const lockedDir = (generationDir: string, name: LockedName) => path.join(generationDir, name);

/** The bin `bin` of component `name`, relative to its generation. */
export const lockedBinTarget = (name: LockedName, bin: string) => `${name}/node_modules/.bin/${bin}`;

/** The compiled lock files of `name`. */
export const lockFiles = (name: LockedName): Promise<LockFiles> => LOCKS[name].files();

/** The compiled lock's record of the component's own package, which must be exactly the catalogue's pin. */
export function checkLockPin(entry: LockedEntry, files: LockFiles): void {
  const locked = files.lock.packages[`node_modules/${entry.package}`];
  if (locked?.version !== entry.version || locked.integrity !== entry.integrity)
    throw new IvoaiError(
      "STATE_CORRUPT",
      `integrity check failed for ${entry.package}@${entry.version}: the compiled lock has ` +
        `${locked?.version ?? "nothing"} ${locked?.integrity ?? ""}, the catalogue pins ${entry.integrity}; ` +
        "nothing was installed",
    );
}

/** Installs `entry` into GENERATION/NAME from its lock and checks it; the caller removes the generation on failure. */
export async function installLocked(
  generationDir: string,
  entry: LockedEntry,
  npm: Omit<NpmRunOptions, "cwd">,
  progress: (text: string) => void,
): Promise<void> {
  const files = await lockFiles(entry.name);
  checkLockPin(entry, files);
  const dir = lockedDir(generationDir, entry.name);
  await fs.mkdir(dir, { mode: 0o700 });
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  await fs.writeFile(path.join(dir, "package.json"), json(files.packageJson));
  await fs.writeFile(path.join(dir, "package-lock.json"), json(files.lock));
  progress(
    `installing ${entry.package}@${entry.version} from its reviewed lock (npm ci, no install scripts)`,
  );
  await runNpm(["ci", "--ignore-scripts", "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error"], {
    ...npm,
    cwd: dir,
  });
  for (const bin of entry.bins) {
    await fs.access(path.join(dir, "node_modules", ".bin", bin), fs.constants.X_OK).catch(() => {
      throw new IvoaiError("INTERNAL", `${entry.package}@${entry.version} installed no '${bin}' executable`);
    });
  }
  try {
    await LOCKS[entry.name].verify(dir);
  } catch (error) {
    throw new IvoaiError(
      "STATE_CORRUPT",
      `${entry.package}@${entry.version} is not the reviewed release: ${(error as Error).message}; ` +
        "nothing was installed",
    );
  }
}
