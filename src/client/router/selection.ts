// Which servers a session sees: every enabled profile by default, or exactly the ones named; a named source
// that is unavailable fails before the session starts.
import type { ServerProfile } from "../../config/client-config.js";
import { IvoaiError } from "../../shared/errors.js";
import { discover } from "../connections/connect.js";
import type { ConnectionRegistry } from "../connections/registry.js";

export interface Source {
  profile: ServerProfile;
  token: string;
}

/** Sources that answer for the same purpose and group; members ordered primary first. */
export interface SourceGroup {
  key: string;
  purpose: string;
  members: Source[];
}

/** `--knowledge-source a --knowledge-source b,c` → [a, b, c]. */
export function parseSourceFlags(values: readonly string[]): string[] {
  return [
    ...new Set(
      values
        .flatMap((value) => value.split(","))
        .map((value) => value.trim())
        .filter(Boolean),
    ),
  ];
}

export async function selectSources(
  registry: ConnectionRegistry,
  requested: readonly string[],
  options: { checkReady?: boolean } = {},
): Promise<Source[]> {
  const { profiles, secrets } = await registry.read();
  const withToken = (profile: ServerProfile): Source | undefined => {
    const token = secrets.servers[profile.id]?.credential;
    return token ? { profile, token } : undefined;
  };
  if (requested.length === 0) {
    return profiles.filter((profile) => profile.enabled).flatMap((profile) => withToken(profile) ?? []);
  }
  const chosen: Source[] = [];
  for (const name of requested) {
    const profile = profiles.find((entry) => entry.alias === name || entry.id === name);
    if (!profile) throw new IvoaiError("NOT_FOUND", `knowledge source ${name} is not connected`);
    if (!profile.enabled) throw new IvoaiError("CONFLICT", `knowledge source ${name} is disabled`);
    const source = withToken(profile);
    if (!source)
      throw new IvoaiError(
        "CONFIG_INVALID",
        `knowledge source ${name} has no stored credential; connect it again`,
      );
    if (options.checkReady !== false) {
      try {
        await discover(profile.url, 3_000);
      } catch (error) {
        throw new IvoaiError(
          "NETWORK",
          `knowledge source ${name} is unavailable: ${(error as Error).message}`,
        );
      }
    }
    chosen.push(source);
  }
  return chosen;
}

/** Groups by purpose and redundancy group (a profile without a group is its own group). */
export function groupSources(sources: readonly Source[]): SourceGroup[] {
  const groups = new Map<string, SourceGroup>();
  for (const source of sources) {
    const { purpose, redundancy_group, id } = source.profile;
    const key = `${purpose}/${redundancy_group ?? `#${id}`}`;
    const group = groups.get(key) ?? { key, purpose, members: [] };
    group.members.push(source);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    group.members.sort(
      (a, b) => a.profile.priority - b.profile.priority || a.profile.alias.localeCompare(b.profile.alias),
    );
  }
  return [...groups.values()].sort((a, b) => a.key.localeCompare(b.key));
}
