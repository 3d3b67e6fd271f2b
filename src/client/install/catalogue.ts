// The install catalogue compiled into ivoai: the exact official agent packages `ivoai setup`/`update` install,
// their npm integrity, bins and whether their lifecycle scripts may run. `latest` or a range is never a target.
import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { IvoaiError } from "../../shared/errors.js";
import { COMPONENT_MANIFEST } from "./components.js";

export type AgentName = "codex" | "claude" | "opencode";
export const AGENTS: readonly AgentName[] = ["codex", "claude", "opencode"];

/** Test seam only: a JSON catalogue that replaces the compiled one (tests install tiny packed fakes). */
export const CATALOGUE_OVERRIDE_ENV = "IVOAI_INSTALL_CATALOGUE";
/** Must be "1" beside CATALOGUE_OVERRIDE_ENV: one stray variable alone never swaps what setup installs. */
export const CATALOGUE_UNSAFE_ENV = "IVOAI_UNSAFE_TEST_CATALOGUE";

const exactVersion = z
  .string()
  .regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, "must be an exact version (never latest or a range)");

export const catalogueEntrySchema = z.object({
  agent: z.enum(["codex", "claude", "opencode"]),
  package: z.string().regex(/^(@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*$/),
  version: exactVersion,
  /** npm's `dist.integrity` of exactly this version; checked against the lockfile after install. */
  integrity: z.string().regex(/^sha512-[A-Za-z0-9+/]{86}==$/),
  bins: z.array(z.string().regex(/^[a-z][a-z0-9-]*$/)).min(1),
  /** Whether the package's own install scripts may run (npm `allowScripts`); its dependencies' never do. */
  allow_scripts: z.boolean(),
  /** Why the scripts are needed (or not): reviewed with the pin. */
  scripts_note: z.string(),
  /** Absolute path of a local tarball instead of the registry; only an override catalogue may set it. */
  tarball: z.string().optional(),
});

/** A component installed with `npm ci` from the full lock compiled into ivoai (manifest/locks/NAME). */
export const lockedEntrySchema = z.object({
  name: z.enum(["ruflo"]),
  package: catalogueEntrySchema.shape.package,
  version: exactVersion,
  /** Checked against the compiled lock before anything is installed. */
  integrity: catalogueEntrySchema.shape.integrity,
  bins: catalogueEntrySchema.shape.bins,
});

/** The most one agent generation may occupy on disk (the three official CLIs take about 1.2 GB). */
export const DEFAULT_MAX_INSTALL_BYTES = 3 * 1024 ** 3;

export const catalogueSchema = z.object({
  revision: z.number().int().positive(),
  max_install_bytes: z.number().int().positive().default(DEFAULT_MAX_INSTALL_BYTES),
  agents: z.array(catalogueEntrySchema),
  /** Optional components `setup --with NAME` installs from their lock (none when absent). */
  components: z.array(lockedEntrySchema).default([]),
});

export type CatalogueEntry = z.infer<typeof catalogueEntrySchema>;
export type LockedEntry = z.infer<typeof lockedEntrySchema>;
export type LockedName = LockedEntry["name"];
export const LOCKED_COMPONENTS: readonly LockedName[] = ["ruflo"];
export type Catalogue = z.infer<typeof catalogueSchema>;

/** The reviewed pins of the agents, read from manifest/components.json (the contract test compares each
 * integrity with `npm view PKG@VER dist.integrity`). */
export const COMPILED_CATALOGUE: Catalogue = catalogueSchema.parse({
  revision: COMPONENT_MANIFEST.revision,
  max_install_bytes: COMPONENT_MANIFEST.max_install_bytes,
  agents: COMPONENT_MANIFEST.components
    .filter((entry) => entry.kind === "agent")
    .map((entry) => ({
      agent: entry.name,
      package: entry.package,
      version: entry.version,
      integrity: entry.integrity,
      bins: entry.bins,
      allow_scripts: entry.allow_scripts,
      scripts_note: entry.scripts_note,
    })),
  components: COMPONENT_MANIFEST.components
    .filter((entry) => entry.method === "npm-ci-lock")
    .map((entry) => ({
      name: entry.name,
      package: entry.package,
      version: entry.version,
      integrity: entry.integrity,
      bins: entry.bins,
    })),
});

/**
 * The compiled catalogue, or (test seam) the JSON file named by IVOAI_INSTALL_CATALOGUE, honoured only with
 * IVOAI_UNSAFE_TEST_CATALOGUE=1 and announced through `warn` every time.
 */
export function loadCatalogue(
  env: NodeJS.ProcessEnv = process.env,
  warn: (text: string) => void = () => undefined,
): Catalogue {
  const file = env[CATALOGUE_OVERRIDE_ENV];
  if (!file) return COMPILED_CATALOGUE;
  if (env[CATALOGUE_UNSAFE_ENV] !== "1")
    throw new IvoaiError(
      "CONFIG_INVALID",
      `${CATALOGUE_OVERRIDE_ENV} is a test seam and is refused unless ${CATALOGUE_UNSAFE_ENV}=1 is set too: ` +
        `unset ${CATALOGUE_OVERRIDE_ENV} to install the reviewed agent versions`,
    );
  warn(
    `${CATALOGUE_OVERRIDE_ENV}=${file} replaces the reviewed install catalogue (test seam, ` +
      `${CATALOGUE_UNSAFE_ENV}=1): the agents installed are whatever that file names`,
  );
  if (!path.isAbsolute(file))
    throw new IvoaiError("CONFIG_INVALID", `${CATALOGUE_OVERRIDE_ENV} must be an absolute path`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new IvoaiError("CONFIG_INVALID", `${CATALOGUE_OVERRIDE_ENV} ${file}: ${(error as Error).message}`);
  }
  const parsed = catalogueSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IvoaiError("CONFIG_INVALID", `${file}: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  for (const entry of parsed.data.agents) {
    if (entry.tarball !== undefined && !path.isAbsolute(entry.tarball))
      throw new IvoaiError("CONFIG_INVALID", `${file}: tarball of ${entry.agent} must be an absolute path`);
  }
  return parsed.data;
}

export function catalogueEntry(catalogue: Catalogue, agent: AgentName): CatalogueEntry {
  const entry = catalogue.agents.find((item) => item.agent === agent);
  if (!entry) throw new IvoaiError("NOT_FOUND", `the install catalogue has no entry for ${agent}`);
  return entry;
}

export function lockedEntry(catalogue: Catalogue, name: LockedName): LockedEntry {
  const entry = catalogue.components.find((item) => item.name === name);
  if (!entry) throw new IvoaiError("NOT_FOUND", `the install catalogue has no entry for ${name}`);
  return entry;
}

/** What npm is asked for: the exact version, or the override's local tarball. */
export function npmSpec(entry: Pick<CatalogueEntry, "version" | "tarball">): string {
  return entry.tarball ? `file:${entry.tarball}` : entry.version;
}
