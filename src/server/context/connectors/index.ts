import { createFilesystemConnector } from "./filesystem.js";
import { createGitConnector } from "./git.js";
import type { Connector, ConnectorOptions, ConnectorType } from "./types.js";

export { SkipError, type SkipReason } from "../skip.js";
export { gitListFiles } from "./git.js";
export { closeAll, MAX_DEPTH, openRoot } from "./safe-fs.js";
export type { Connector, ConnectorOptions, ConnectorType, DiscoveredFile, SkippedEntry } from "./types.js";
export { isSkipped } from "./types.js";

export function createConnector(
  type: ConnectorType,
  name: string,
  root: string,
  options: ConnectorOptions = {},
): Connector {
  return type === "git"
    ? createGitConnector(name, root, options)
    : createFilesystemConnector(name, root, options);
}
