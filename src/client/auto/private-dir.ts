// Private runtime directories for AUTO (the artifact store, the control socket): created 0700 and verified,
// because a directory someone else can enter or swap would expose worker evidence or the control channel.
import { promises as fs } from "node:fs";
import { IvoaiError } from "../../shared/errors.js";

/**
 * Creates `dir` (and missing parents) with mode 0700 and verifies it: a real directory (not a symbolic link),
 * owned by this user, with no group or other permission bits. Refuses anything else with UNSAFE_PATH.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const stat = await fs.lstat(dir);
  if (stat.isSymbolicLink()) {
    throw new IvoaiError("UNSAFE_PATH", `refusing ${dir}: it is a symbolic link`);
  }
  if (!stat.isDirectory()) throw new IvoaiError("UNSAFE_PATH", `refusing ${dir}: not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new IvoaiError("UNSAFE_PATH", `refusing ${dir}: owned by uid ${stat.uid}, not ${uid}`);
  }
  if ((stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, "0");
    throw new IvoaiError("UNSAFE_PATH", `refusing ${dir}: mode ${mode} lets others in; expected 0700`);
  }
}
