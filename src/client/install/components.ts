// manifest/components.json, the one reviewed list of what ivoai manages or uses beside itself (seed 000's pinned
// table): compiled into the binary, checked here; the agents' install catalogue is read from it.

import { z } from "zod";
import manifestJson from "../../../manifest/components.json" with { type: "json" };
import { IvoaiError } from "../../shared/errors.js";

const exactVersion = z
  .string()
  .regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, "must be an exact version (never latest or a range)");
const integrity = z.string().regex(/^sha512-[A-Za-z0-9+/]{86}==$/, "must be npm's sha512 integrity");

export const componentSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/),
    kind: z.enum(["agent", "coordinator", "native", "compression", "embedder"]),
    package: z
      .string()
      .regex(/^(@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*$/)
      .optional(),
    version: exactVersion.nullable(),
    integrity: integrity.nullable(),
    method: z.enum(["npm", "npm-ci-lock", "bundled", "external"]),
    bins: z.array(z.string().regex(/^[a-z][a-z0-9-]*$/)).optional(),
    allow_scripts: z.boolean().optional(),
    scripts_note: z.string().optional(),
    purpose: z.string().min(1),
    platforms: z.union([z.literal("any"), z.array(z.string().regex(/^[a-z0-9]+-[a-z0-9]+$/))]),
    /** Platform → why it cannot be installed there. */
    unsupported: z.record(z.string(), z.string().min(1)).optional(),
    /** For method npm-ci-lock: where its full lock lives and how it was written. */
    lock: z.string().optional(),
    note: z.string().optional(),
  })
  .refine((entry) => entry.method !== "external" || entry.note, "an unpinned component says why in note")
  .refine((entry) => (entry.method === "npm-ci-lock") === (entry.lock !== undefined), {
    message: "a lock-installed component, and only one, names its lock",
  })
  .refine((entry) => entry.method === "external" || (entry.version && entry.integrity && entry.package), {
    message: "a managed component has a package, an exact version and its integrity",
  });

export const componentManifestSchema = z.object({
  revision: z.number().int().positive(),
  max_install_bytes: z.number().int().positive(),
  components: z.array(componentSchema).min(1),
});

export type Component = z.infer<typeof componentSchema>;
export type ComponentManifest = z.infer<typeof componentManifestSchema>;

/** The manifest compiled in, checked once when first asked for. */
export const COMPONENT_MANIFEST: ComponentManifest = componentManifestSchema.parse(manifestJson);

/** This machine's platform as the manifest names it (`linux-x64`). */
export function currentPlatform(): string {
  return `${process.platform}-${process.arch}`;
}

/** Refuses, before anything is installed, the components of `names` the manifest says `platform` cannot have. */
export function refuseUnsupported(names: readonly string[], platform = currentPlatform()): void {
  const refused = names.flatMap((name) => {
    const component = COMPONENT_MANIFEST.components.find((entry) => entry.name === name);
    const why = component ? unsupportedReason(component, platform) : null;
    return why ? [`${name}: ${why}`] : [];
  });
  if (refused.length > 0)
    throw new IvoaiError(
      "CONFLICT",
      `cannot install on ${platform}: ${refused.join("; ")}; nothing was installed (ivoai components lists why)`,
    );
}

/** Why `component` cannot be installed on `platform`, or null when it can. */
export function unsupportedReason(component: Component, platform = currentPlatform()): string | null {
  const stated = component.unsupported?.[platform];
  if (stated) return stated;
  if (component.platforms !== "any" && !component.platforms.includes(platform))
    return `no reviewed build for ${platform} (reviewed: ${component.platforms.join(", ")})`;
  return null;
}
