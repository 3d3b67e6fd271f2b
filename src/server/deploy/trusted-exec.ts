// What the unit's ExecStart runs, root runs at every start: only code nobody but root can change may go there.
import { promises as fs } from "node:fs";
import path from "node:path";
import { errnoCode } from "../../shared/errors.js";

/** A path, or one of its ancestors, that someone other than root can change, and why. */
export interface UntrustedPath {
  path: string;
  reason: string;
}

const WRITABLE_BY_OTHERS = 0o022;
const STICKY = 0o1000;

/** Why `stat` lets someone other than root change what it names, or null. */
function problem(stat: Awaited<ReturnType<typeof fs.lstat>>): string | null {
  if (stat.uid !== 0) return `owned by uid ${stat.uid}, not root`;
  if (stat.isSymbolicLink()) return null;
  // A root-owned sticky directory (/tmp) lets nobody rename or remove root's entries in it.
  if (Number(stat.mode) & WRITABLE_BY_OTHERS && !(stat.isDirectory() && Number(stat.mode) & STICKY)) {
    return `writable by its group or others (mode ${(Number(stat.mode) & 0o7777).toString(8)})`;
  }
  return null;
}

/** The first component of `file` (resolved) from / down that someone other than root can change. */
async function checkChain(file: string): Promise<UntrustedPath | null> {
  const real = await fs.realpath(file);
  const parts = real.split("/").filter(Boolean);
  for (let depth = 0; depth <= parts.length; depth += 1) {
    const component = `/${parts.slice(0, depth).join("/")}`;
    const reason = problem(await fs.lstat(component));
    if (reason) return { path: component, reason };
  }
  return null;
}

/** Every entry under `dir` (not .git), links checked by what they resolve to. */
async function checkTree(dir: string): Promise<UntrustedPath | null> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    if (entry.name === ".git") continue;
    const full = path.join(dir, entry.name);
    const stat = await fs.lstat(full);
    const reason = problem(stat);
    if (reason) return { path: full, reason };
    if (stat.isSymbolicLink()) {
      const found = await checkChain(full).catch((error) => {
        if (errnoCode(error) === "ENOENT") return null;
        throw error;
      });
      if (found) return found;
    } else if (stat.isDirectory()) {
      const found = await checkTree(full);
      if (found) return found;
    }
  }
  return null;
}

/** The package directory of an entry: the nearest ancestor holding a package.json. */
async function packageDir(entry: string): Promise<string | null> {
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      await fs.access(path.join(dir, "package.json"));
      return dir;
    } catch {}
  }
  return null;
}

/**
 * The first path someone other than root could change among the node binary, the ivoai entry and everything in
 * the entry's package (its bundled dependencies included), each with every directory above it. Null: all root's.
 */
export async function untrustedExecPath(nodePath: string, entryPath: string): Promise<UntrustedPath | null> {
  try {
    const entry = await fs.realpath(entryPath);
    const pkg = await packageDir(entry);
    return (
      (await checkChain(nodePath)) ??
      (await checkChain(entry)) ??
      (pkg ? ((await checkChain(pkg)) ?? (await checkTree(pkg))) : null)
    );
  } catch (error) {
    const where = (error as { path?: string }).path ?? entryPath;
    return { path: where, reason: `impossible to check (${errnoCode(error) ?? String(error)})` };
  }
}
