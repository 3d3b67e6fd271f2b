// The built console's files inside the single-file binary: scripts/build.mjs replaces this module with the
// contents of dist/console. From source it holds nothing, and the gateway reads dist/console from disk instead.

/** One file of the built console: its body, text as is or anything else base64 (its name gives its type). */
export interface BundledAsset {
  encoding: "utf8" | "base64";
  body: string;
}

/** Path under /console/ → file; undefined when running from source. */
export const BUNDLED_CONSOLE_ASSETS: Readonly<Record<string, BundledAsset>> | undefined = undefined;
