// The filesystem connector: walks a configured root by directory descriptors, never following a link.
import { skipByPath, skipDirectory } from "../filter.js";
import {
  closeAll,
  isSafeName,
  listDir,
  openChildDir,
  openRoot,
  readChildFile,
  type SafeDir,
  SkipError,
} from "./safe-fs.js";
import type { Connector, DiscoveredFile, SkippedEntry } from "./types.js";

export function createFilesystemConnector(name: string, root: string): Connector {
  return {
    name,
    type: "filesystem",
    root,
    async *discover() {
      const top = await openRoot(root);
      try {
        yield* walk(top, "");
      } finally {
        await closeAll([top]);
      }
    },
  };
}

async function* walk(dir: SafeDir, prefix: string): AsyncGenerator<DiscoveredFile | SkippedEntry> {
  const entries = (await listDir(dir)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const relPath = prefix + entry.name;
    if (!isSafeName(entry.name)) {
      yield { relPath, skip: "unsafe name" };
    } else if (entry.isSymbolicLink()) {
      yield { relPath, skip: "symlink" };
    } else if (entry.isDirectory()) {
      const reason = skipDirectory(entry.name);
      if (reason) {
        yield { relPath, skip: reason };
        continue;
      }
      let child: SafeDir;
      try {
        child = await openChildDir(dir, entry.name);
      } catch (error) {
        if (error instanceof SkipError) {
          yield { relPath, skip: error.reason };
          continue;
        }
        throw error;
      }
      try {
        yield* walk(child, `${relPath}/`);
      } finally {
        await closeAll([child]);
      }
    } else if (!entry.isFile()) {
      yield { relPath, skip: "special file" };
    } else {
      const reason = skipByPath(relPath);
      if (reason) yield { relPath, skip: reason };
      else yield { relPath, read: (maxBytes: number) => readChildFile(dir, entry.name, maxBytes) };
    }
  }
}
