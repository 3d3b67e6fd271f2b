// The command tree's metadata inside the built binary: scripts/build.mjs replaces this module with the manifest
// it extracted from src/cli/tree.ts. From source it holds nothing, and the CLI extracts the manifest at start.
import type { ManifestGroup } from "./manifest.js";

/** Names, summaries, flags and where each command's code is; undefined when running from source. */
export const BUNDLED_COMMAND_MANIFEST: ManifestGroup | undefined = undefined;
