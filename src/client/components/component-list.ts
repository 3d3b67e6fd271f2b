// `ivoai components`: every entry of the manifest with what this machine has of it (found where a launch would
// find it, the bundled SQLite actually loaded), or why it cannot be installed on this platform.
import path from "node:path";
import type { ClientPaths } from "../../config/client-paths.js";
import { checkNativeSqlite } from "../../shared/native-sqlite.js";
import { findExecutable } from "../agents/catalog.js";
import { COMPONENT_MANIFEST, type Component, currentPlatform, unsupportedReason } from "../install/index.js";

export interface ComponentListing extends Omit<Component, "unsupported"> {
  /** yes / no here; unknown for a server ivoai only reaches over HTTP. */
  installed: "yes" | "no" | "unknown";
  /** Where it was found (the executable, the native module), or what was seen. */
  found: string | null;
  /** Why it cannot be installed on this platform, or null. */
  unsupported_here: string | null;
}

export async function listComponents(
  paths: ClientPaths,
  env: NodeJS.ProcessEnv,
): Promise<ComponentListing[]> {
  const managedBin = path.join(paths.dataDir, "bin");
  const platform = currentPlatform();
  return Promise.all(
    COMPONENT_MANIFEST.components.map(async ({ unsupported: _reasons, ...component }) => {
      const base = { ...component, unsupported_here: unsupportedReason({ ...component }, platform) };
      if (component.kind === "native") {
        const health = checkNativeSqlite();
        const found = health.healthy ? `SQLite ${health.version} at ${health.path}` : health.message;
        return { ...base, installed: health.healthy ? "yes" : "no", found } as ComponentListing;
      }
      if (component.kind === "embedder")
        return { ...base, installed: "unknown", found: null } as ComponentListing;
      const bin = component.bins?.[0] ?? component.name;
      const where = (await findExecutable(bin, managedBin, env)) ?? null;
      return { ...base, installed: where ? "yes" : "no", found: where } as ComponentListing;
    }),
  );
}
