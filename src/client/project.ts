// Client identity, by the first rule that applies: the nearest .ivoai.toml (`ivoai project init`), else the main
// Git repository (repo-root: one project for all its linked worktrees and subfolders), else host:<hostname>.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { writeFileAtomic } from "../shared/atomic-file.js";
import { IvoaiError } from "../shared/errors.js";
import { findMainRepository, type GitLookupOptions } from "./project-git.js";

export const PROJECT_MARKER = ".ivoai.toml";

/** Which rule gave the identity: a marker file, the main Git repository, or the host outside Git. */
export type IdentityRule = "marker" | "git" | "host";

export interface ProjectIdentity {
  id: string;
  kind: "project" | "host";
  rule: IdentityRule;
  /** The marker's `name`, the main repository's folder name, or the normalized hostname. */
  name: string;
  /** The marker's folder or the main repository's root; null for the host. */
  root: string | null;
  marker: string | null;
  /** The worktree `cwd` is in (rule git), else null. */
  worktree: string | null;
  /** Why no repository was used (rule host): not inside Git, git missing, failing or too slow. */
  reason: string | null;
}

export function hostIdentity(name = hostname()): string {
  const normalized =
    name
      .toLowerCase()
      .replace(/\.$/, "")
      .replace(/[^a-z0-9.-]+/g, "-") || "localhost";
  return `host:${normalized}`;
}

/** `project:<16 hex>` from a root's absolute path: `project init` and the repo-root rule agree on it. */
function projectId(root: string): string {
  return `project:${createHash("sha256").update(root).digest("hex").slice(0, 16)}`;
}

async function findMarker(cwd: string): Promise<ProjectIdentity | null> {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const marker = path.join(dir, PROJECT_MARKER);
    try {
      const raw = parseToml(await fs.readFile(marker, "utf8")) as { project_id?: unknown; name?: unknown };
      if (typeof raw.project_id === "string" && raw.project_id.length > 0) {
        const name = typeof raw.name === "string" && raw.name.length > 0 ? raw.name : path.basename(dir);
        return {
          id: raw.project_id,
          kind: "project",
          rule: "marker",
          name,
          root: dir,
          marker,
          worktree: null,
          reason: null,
        };
      }
    } catch (error) {
      if ((error as { code?: string }).code !== "ENOENT") {
        throw new IvoaiError("CONFIG_INVALID", `${marker} is not a valid ivoai project marker`);
      }
    }
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * The identity sessions started in `cwd` use. The nearest .ivoai.toml from `cwd` upwards wins; without one, the
 * main Git repository (one bounded git call; `options.env` gives only its PATH); outside Git, or when git is
 * missing or fails, the host, with the reason.
 */
export async function resolveIdentity(cwd: string, options: GitLookupOptions = {}): Promise<ProjectIdentity> {
  const marked = await findMarker(cwd);
  if (marked) return marked;
  const repo = await findMainRepository(path.resolve(cwd), options);
  if (repo.found) {
    const { mainRoot, worktree, name } = repo;
    return {
      id: projectId(mainRoot),
      kind: "project",
      rule: "git",
      name,
      root: mainRoot,
      marker: null,
      worktree,
      reason: null,
    };
  }
  const id = hostIdentity();
  const name = id.slice("host:".length);
  return {
    id,
    kind: "host",
    rule: "host",
    name,
    root: null,
    marker: null,
    worktree: null,
    reason: repo.reason,
  };
}

/**
 * Writes .ivoai.toml at the worktree's root (or `cwd` outside Git) with the id the repo-root rule gives (from the
 * main repository, so every worktree keeps one id), or outside Git one from that folder's absolute path.
 */
export async function initProject(cwd: string, options: GitLookupOptions = {}): Promise<ProjectIdentity> {
  const repo = await findMainRepository(path.resolve(cwd), options);
  const root = repo.found ? repo.worktree : path.resolve(cwd);
  const id = projectId(repo.found ? repo.mainRoot : root);
  const name = repo.found ? repo.name : path.basename(root);
  const marker = path.join(root, PROJECT_MARKER);
  const content = `# ivoai project marker: sessions started below this folder use this identity.\n${stringifyToml({ project_id: id, name })}`;
  await writeFileAtomic(marker, content, { mode: 0o644 });
  return { id, kind: "project", rule: "marker", name, root, marker, worktree: null, reason: null };
}

/** What `ivoai project show` prints: the id, and which rule gave it and from where. */
export function describeIdentity(identity: ProjectIdentity): string {
  const head = `${identity.id} (${identity.name})`;
  switch (identity.rule) {
    case "marker":
      return `${head}\nrule: marker: ${identity.marker}`;
    case "git": {
      const here =
        identity.worktree && identity.worktree !== identity.root ? `\nworktree: ${identity.worktree}` : "";
      return `${head}\nrule: repo-root: main Git repository ${identity.root}${here}`;
    }
    case "host":
      return `${head}\nrule: host: ${identity.reason ?? "outside Git"} (every folder of this host outside Git shares it)`;
  }
}
