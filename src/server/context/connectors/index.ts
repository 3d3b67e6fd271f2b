import { createFilesystemConnector } from "./filesystem.js";
import { createGitConnector } from "./git.js";
import type { Connector, ConnectorType } from "./types.js";

export { SkipError, type SkipReason } from "./safe-fs.js";
export type { Connector, ConnectorType, DiscoveredFile, SkippedEntry } from "./types.js";
export { isSkipped } from "./types.js";

export function createConnector(type: ConnectorType, name: string, root: string): Connector {
  return type === "git" ? createGitConnector(name, root) : createFilesystemConnector(name, root);
}
