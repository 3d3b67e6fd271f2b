// Client identity: a project explicitly initialised with .ivoai.toml, otherwise host:<normalized-hostname>.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { writeFileAtomic } from "../shared/atomic-file.js";
import { IvoaiError } from "../shared/errors.js";

export const PROJECT_MARKER = ".ivoai.toml";

export interface ProjectIdentity {
  id: string;
  kind: "project" | "host";
  root: string | null;
  marker: string | null;
}

export function hostIdentity(name = hostname()): string {
  const normalized =
    name
      .toLowerCase()
      .replace(/\.$/, "")
      .replace(/[^a-z0-9.-]+/g, "-") || "localhost";
  return `host:${normalized}`;
}

/** The nearest .ivoai.toml from `cwd` upwards decides; merely being inside a git repository does not. */
export async function resolveIdentity(cwd: string): Promise<ProjectIdentity> {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const marker = path.join(dir, PROJECT_MARKER);
    try {
      const raw = parseToml(await fs.readFile(marker, "utf8")) as { project_id?: unknown };
      if (typeof raw.project_id === "string" && raw.project_id.length > 0) {
        return { id: raw.project_id, kind: "project", root: dir, marker };
      }
    } catch (error) {
      if ((error as { code?: string }).code !== "ENOENT") {
        throw new IvoaiError("CONFIG_INVALID", `${marker} is not a valid ivoai project marker`);
      }
    }
    if (path.dirname(dir) === dir) break;
  }
  return { id: hostIdentity(), kind: "host", root: null, marker: null };
}

/** Writes .ivoai.toml at the git root (or `cwd` outside git) with a deterministic id from that absolute root. */
export async function initProject(cwd: string): Promise<ProjectIdentity> {
  let root = path.resolve(cwd);
  try {
    const { stdout } = await promisify(execFile)("git", ["-C", cwd, "rev-parse", "--show-toplevel"], {
      timeout: 5_000,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_CONFIG_NOSYSTEM: "1", HOME: "/nonexistent" },
    });
    root = stdout.trim() || root;
  } catch {
    // Not a git checkout: the folder itself is the project root.
  }
  const id = `project:${createHash("sha256").update(root).digest("hex").slice(0, 16)}`;
  const marker = path.join(root, PROJECT_MARKER);
  const content = `# ivoai project marker: sessions started below this folder use this identity.\n${stringifyToml({ project_id: id, name: path.basename(root) })}`;
  await writeFileAtomic(marker, content, { mode: 0o644 });
  return { id, kind: "project", root, marker };
}
