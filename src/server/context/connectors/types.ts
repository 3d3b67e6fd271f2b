// The connector contract: discover candidate files and read each through a verified descriptor.
import type { SkipReason } from "../skip.js";

export type ConnectorType = "filesystem" | "git";

/** How a connector reads its tree; stored with the connector's registration. */
export interface ConnectorOptions {
  /** Index regular files that have more than one hard link (off: such a file may be a link to one outside the root). */
  allowHardlinks?: boolean;
}

export interface DiscoveredFile {
  relPath: string;
  /**
   * Reads the file (valid until the iteration moves on). `sourceStat` identifies the version read (see
   * sourceStatKey), when it can be trusted to recognise the file unchanged later.
   */
  read(maxBytes: number): Promise<{ data: Buffer; mtimeMs: number; sourceStat?: string | undefined }>;
  /** The file's current stat key and size without reading it, if the connector can tell cheaply and safely. */
  stat?(maxBytes: number): Promise<{ sourceStat: string; size: number } | undefined>;
}

export interface SkippedEntry {
  relPath: string;
  skip: SkipReason;
}

export interface Connector {
  name: string;
  type: ConnectorType;
  root: string;
  /** Every candidate file or skipped entry; throws if the enumeration itself fails (then nothing is reconciled). */
  discover(): AsyncIterable<DiscoveredFile | SkippedEntry>;
}

export function isSkipped(entry: DiscoveredFile | SkippedEntry): entry is SkippedEntry {
  return "skip" in entry;
}
