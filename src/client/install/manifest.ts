// The ownership manifest ($XDG_STATE_HOME/ivoai/install.json, 0600): which agent executables ivoai installed
// (`managed`, in which generation) and which it found already on PATH (`pre_existing`, never replaced).
import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";

const managedSchema = z.object({
  status: z.literal("managed"),
  package: z.string(),
  version: z.string(),
  integrity: z.string(),
  bins: z.array(z.string()),
  allow_scripts: z.boolean(),
  tarball: z.string().optional(),
  installed_at: z.string(),
});

const preExistingSchema = z.object({
  status: z.literal("pre_existing"),
  path: z.string(),
  recorded_at: z.string(),
});

export const agentRecordSchema = z.discriminatedUnion("status", [managedSchema, preExistingSchema]);
export type AgentRecord = z.infer<typeof agentRecordSchema>;
export type ManagedRecord = z.infer<typeof managedSchema>;

export const manifestSchema = z.object({
  schema: z.literal(1),
  catalogue_revision: z.number().int(),
  /** The generation directory under $XDG_DATA_HOME/ivoai/agents that `current` points at. */
  generation: z.string().nullable(),
  /** ivoai's persisted-data version (config, secrets, sessions) after the last setup/update. */
  data_version: z.number().int(),
  agents: z.record(z.string(), agentRecordSchema),
  /** Components installed from a compiled lock (`setup --with ruflo`), or found on PATH; none in older files. */
  components: z.record(z.string(), agentRecordSchema).default({}),
  /** What `ivoai rollback` returns to: the generation and snapshot taken by the last update. */
  previous: z.object({ generation: z.string().nullable(), snapshot: z.string() }).nullable(),
  updated_at: z.string(),
});

export type InstallManifest = z.infer<typeof manifestSchema>;

export function manifestFile(stateDir: string): string {
  return path.join(stateDir, "install.json");
}

export async function readManifest(stateDir: string): Promise<InstallManifest | undefined> {
  const file = manifestFile(stateDir);
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
  const parsed = manifestSchema.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new IvoaiError(
      "STATE_CORRUPT",
      `${file} is not an ivoai install manifest; move it away and run setup`,
    );
  return parsed.data;
}

export async function writeManifest(stateDir: string, manifest: InstallManifest): Promise<void> {
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(manifestFile(stateDir), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
}

export function managedAgents(
  manifest: Pick<InstallManifest, "agents"> | undefined,
): [string, ManagedRecord][] {
  return managedOf(manifest?.agents);
}

/** The components ivoai installed from their lock (not those found on PATH). */
export function managedComponents(
  manifest: Pick<InstallManifest, "components"> | undefined,
): [string, ManagedRecord][] {
  return managedOf(manifest?.components);
}

function managedOf(records: Record<string, AgentRecord> | undefined): [string, ManagedRecord][] {
  return Object.entries(records ?? {}).filter(
    (entry): entry is [string, ManagedRecord] => entry[1].status === "managed",
  );
}
