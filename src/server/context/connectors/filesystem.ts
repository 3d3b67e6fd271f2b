// The filesystem connector: walks a configured root by directory descriptors, never following a link.
import { skipByPath, skipDirectory } from "../filter.js";
import { SkipError } from "../skip.js";
import {
  closeAll,
  isSafeName,
  listDir,
  MAX_DEPTH,
  openChildDir,
  openRoot,
  readChildFile,
  type SafeDir,
  statChildFile,
} from "./safe-fs.js";
import type { Connector, ConnectorOptions, DiscoveredFile, SkippedEntry } from "./types.js";

export function createFilesystemConnector(
  name: string,
  root: string,
  options: ConnectorOptions = {},
): Connector {
  return {
    name,
    type: "filesystem",
    root,
    discover: () => walk(root, options),
  };
}

/** One open directory on the way down: its sorted entries and the next one to look at. */
interface Level {
  dir: SafeDir;
  prefix: string;
  entries: import("node:fs").Dirent[];
  next: number;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Depth first in name order with an explicit stack (a deep tree cannot overflow the call stack), holding only
 * the directories on the current path open; a directory more than MAX_DEPTH levels down is skipped.
 */
async function* walk(root: string, options: ConnectorOptions): AsyncGenerator<DiscoveredFile | SkippedEntry> {
  const top = await openRoot(root);
  const stack: Level[] = [];
  try {
    stack.push({ dir: top, prefix: "", entries: (await listDir(top)).sort(byName), next: 0 });
    for (let level = stack.at(-1); level; level = stack.at(-1)) {
      const entry = level.entries[level.next];
      level.next += 1;
      if (!entry) {
        stack.pop();
        if (level.dir !== top) await closeAll([level.dir]);
        continue;
      }
      const relPath = level.prefix + entry.name;
      if (!isSafeName(entry.name)) {
        yield { relPath, skip: "unsafe name" };
      } else if (entry.isSymbolicLink()) {
        yield { relPath, skip: "symlink" };
      } else if (entry.isDirectory()) {
        const reason = skipDirectory(entry.name) ?? (stack.length > MAX_DEPTH ? "too deep" : undefined);
        if (reason) {
          yield { relPath, skip: reason };
          continue;
        }
        let child: SafeDir;
        try {
          child = await openChildDir(level.dir, entry.name);
        } catch (error) {
          if (error instanceof SkipError) {
            yield { relPath, skip: error.reason };
            continue;
          }
          throw error;
        }
        try {
          stack.push({
            dir: child,
            prefix: `${relPath}/`,
            entries: (await listDir(child)).sort(byName),
            next: 0,
          });
        } catch (error) {
          await closeAll([child]);
          throw error;
        }
      } else if (!entry.isFile()) {
        yield { relPath, skip: "special file" };
      } else {
        const reason = skipByPath(relPath);
        const dir = level.dir;
        if (reason) yield { relPath, skip: reason };
        else
          yield {
            relPath,
            read: (maxBytes: number) => readChildFile(dir, entry.name, maxBytes, options),
            stat: async (maxBytes: number) => statChildFile(dir, entry.name, maxBytes, options),
          };
      }
    }
  } finally {
    await closeAll(stack.map((level) => level.dir).filter((dir) => dir !== top));
    await closeAll([top]);
  }
}
