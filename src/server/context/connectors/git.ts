// The git connector: an existing checkout, enumerated by a bounded `git ls-files` with hooks and fsmonitor off.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { IvoaiError } from "../../../shared/errors.js";
import { skipByPath } from "../filter.js";
import {
  closeAll,
  isSafeName,
  MAX_DEPTH,
  openParentOf,
  openRoot,
  readChildFile,
  statChildFile,
} from "./safe-fs.js";
import type { Connector, ConnectorOptions, DiscoveredFile, SkippedEntry } from "./types.js";

const run = promisify(execFile);

export interface GitListOptions {
  timeoutMs?: number;
  maxFiles?: number;
}

/** Tracked files of the checkout at `root`, relative, in git's order. */
export async function gitListFiles(root: string, options: GitListOptions = {}): Promise<string[]> {
  const maxFiles = options.maxFiles ?? 1_000_000;
  try {
    const { stdout } = await run(
      "git",
      [
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.untrackedCache=false",
        "-c",
        "protocol.allow=never",
        // Hooks and fsmonitor are off, so reading a checkout owned by another user runs none of its code.
        "-c",
        `safe.directory=${root}`,
        "ls-files",
        "-z",
        "--cached",
        "--full-name",
      ],
      {
        cwd: root,
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 256 * 1024 * 1024,
        // A minimal environment: no user or system config that could name a program to run.
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_CONFIG_GLOBAL: "/dev/null",
          GIT_OPTIONAL_LOCKS: "0",
          GIT_TERMINAL_PROMPT: "0",
          HOME: "/nonexistent",
        },
      },
    );
    const files = stdout.split("\0").filter((entry) => entry.length > 0);
    if (files.length > maxFiles) {
      throw new IvoaiError(
        "CONFLICT",
        `git checkout ${root} lists ${files.length} files, over the limit of ${maxFiles}`,
      );
    }
    return files;
  } catch (error) {
    if (error instanceof IvoaiError) throw error;
    const message = (error as { stderr?: string }).stderr?.trim().split("\n")[0] ?? (error as Error).message;
    throw new IvoaiError("CONFIG_INVALID", `cannot enumerate git checkout ${root}: ${message}`);
  }
}

export function createGitConnector(
  name: string,
  root: string,
  options: GitListOptions & ConnectorOptions = {},
): Connector {
  return {
    name,
    type: "git",
    root,
    async *discover(): AsyncGenerator<DiscoveredFile | SkippedEntry> {
      const files = await gitListFiles(root, options);
      const top = await openRoot(root);
      try {
        for (const relPath of files) {
          const parts = relPath.split("/");
          if (!parts.every(isSafeName)) {
            yield { relPath, skip: "unsafe name" };
            continue;
          }
          if (parts.length - 1 > MAX_DEPTH) {
            yield { relPath, skip: "too deep" };
            continue;
          }
          const reason = skipByPath(relPath);
          if (reason) {
            yield { relPath, skip: reason };
            continue;
          }
          yield {
            relPath,
            read: async (maxBytes: number) => {
              const { dir, name: file, opened } = await openParentOf(top, relPath);
              try {
                return await readChildFile(dir, file, maxBytes, options);
              } finally {
                await closeAll(opened);
              }
            },
            stat: async (maxBytes: number) => {
              let parent: Awaited<ReturnType<typeof openParentOf>>;
              try {
                parent = await openParentOf(top, relPath);
              } catch {
                return undefined; // the read reports why
              }
              try {
                return statChildFile(parent.dir, parent.name, maxBytes, options);
              } finally {
                await closeAll(parent.opened);
              }
            },
          };
        }
      } finally {
        await closeAll([top]);
      }
    },
  };
}
