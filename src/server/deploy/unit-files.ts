// `server systemd render --out DIR`: writes the rendered units into a real folder, never through a symbolic link
// (a linked output folder or unit file would put root-written units wherever the link points, e.g. /etc).
import { promises as fs, type Stats } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import type { RenderedUnit } from "./systemd-units.js";

async function lstatOrAbsent(file: string): Promise<Stats | undefined> {
  try {
    return await fs.lstat(file);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

/** Refuses an output folder that is a symbolic link or not a directory; creates a missing one (0755). */
async function outputFolder(out: string): Promise<string> {
  const dir = path.resolve(out);
  const stat = await lstatOrAbsent(dir);
  if (stat?.isSymbolicLink()) {
    throw new IvoaiError(
      "UNSAFE_PATH",
      `refusing --out ${dir}: it is a symbolic link (to ${await fs.readlink(dir)}); pass the real folder`,
    );
  }
  if (stat && !stat.isDirectory())
    throw new IvoaiError("UNSAFE_PATH", `refusing --out ${dir}: not a directory`);
  if (!stat) await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  // Created just now or not: it must still be a real folder (nothing swapped a link in meanwhile).
  if (!(await fs.lstat(dir)).isDirectory()) {
    throw new IvoaiError("UNSAFE_PATH", `refusing --out ${dir}: not a real directory`);
  }
  return dir;
}

/**
 * Writes each unit as `<out>/<name>` (0644, atomically), refusing a linked or non-directory output folder and a
 * unit file that is a symbolic link; returns the files written.
 */
export async function writeUnitFiles(out: string, units: readonly RenderedUnit[]): Promise<string[]> {
  const dir = await outputFolder(out);
  const files = units.map((unit) => path.join(dir, unit.name));
  for (const file of files) {
    const stat = await lstatOrAbsent(file);
    if (stat?.isSymbolicLink()) {
      throw new IvoaiError(
        "UNSAFE_PATH",
        `refusing ${file}: it is a symbolic link; remove it and render again`,
      );
    }
  }
  for (const [i, unit] of units.entries())
    await writeFileAtomic(files[i] ?? "", unit.content, { mode: 0o644 });
  return files;
}
