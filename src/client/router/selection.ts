// Which servers a session sees: every enabled profile by default, or the ones named by alias, id, purpose or
// redundancy group; a named group with no reachable member fails before the session starts.
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

/** How a `--knowledge-source` name matched profiles. */
export type MatchKind = "alias" | "id" | "purpose" | "redundancy group";

export interface ResolvedName {
  name: string;
  kind: MatchKind;
  profiles: ServerProfile[];
}

/**
 * Resolves each name to the profiles it means: an alias or id names one server, a purpose or redundancy group
 * names all its members. A name whose readings disagree (alias of one server, purpose of others) is refused.
 */
export function resolveSourceNames(
  profiles: readonly ServerProfile[],
  names: readonly string[],
): ResolvedName[] {
  return names.map((name) => {
    const readings: { kind: MatchKind; profiles: ServerProfile[] }[] = [
      { kind: "alias" as const, profiles: profiles.filter((profile) => profile.alias === name) },
      { kind: "id" as const, profiles: profiles.filter((profile) => profile.id === name) },
      { kind: "purpose" as const, profiles: profiles.filter((profile) => profile.purpose === name) },
      {
        kind: "redundancy group" as const,
        profiles: profiles.filter((profile) => profile.redundancy_group === name),
      },
    ].filter((reading) => reading.profiles.length > 0);
    const first = readings[0];
    if (!first) {
      throw new IvoaiError(
        "NOT_FOUND",
        `knowledge source ${name} is not connected (no server alias, id, purpose or redundancy group is named so)`,
      );
    }
    const ids = (reading: { profiles: ServerProfile[] }) =>
      reading.profiles
        .map((profile) => profile.id)
        .sort()
        .join(",");
    if (readings.some((reading) => ids(reading) !== ids(first))) {
      const listed = readings
        .map((reading) => `${reading.kind} of ${reading.profiles.map((profile) => profile.alias).join(", ")}`)
        .join("; ");
      throw new IvoaiError(
        "USAGE",
        `knowledge source ${name} is ambiguous: it is the ${listed}; name the servers by alias instead`,
        {
          data: { matches: readings.map((r) => ({ kind: r.kind, aliases: r.profiles.map((p) => p.alias) })) },
        },
      );
    }
    return { name, kind: first.kind, profiles: first.profiles };
  });
}

/**
 * The sources of a session: every enabled profile with a credential, or the ones named. A named server must be
 * enabled and credentialed; a named purpose or group contributes its enabled, credentialed members. With
 * `checkReady`, every redundancy group of the selection needs one reachable member: the router fails over
 * within a group at call time, as it does with no selection.
 */
export async function selectSources(
  registry: ConnectionRegistry,
  requested: readonly string[],
  options: { checkReady?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<Source[]> {
  const { profiles, secrets } = await registry.read();
  const withToken = (profile: ServerProfile): Source | undefined => {
    const token = secrets.servers[profile.id]?.credential;
    return token ? { profile, token } : undefined;
  };
  if (requested.length === 0) {
    return profiles.filter((profile) => profile.enabled).flatMap((profile) => withToken(profile) ?? []);
  }
  const chosen = new Map<string, Source>();
  for (const { name, kind, profiles: matched } of resolveSourceNames(profiles, requested)) {
    const single = kind === "alias" || kind === "id";
    const enabled = matched.filter((profile) => profile.enabled);
    if (enabled.length === 0) {
      throw new IvoaiError(
        "CONFLICT",
        single ? `knowledge source ${name} is disabled` : `every server of ${kind} ${name} is disabled`,
      );
    }
    const usable = enabled.flatMap((profile) => withToken(profile) ?? []);
    if (usable.length === 0)
      throw new IvoaiError(
        "CONFIG_INVALID",
        `knowledge source ${name} has no stored credential; connect it again`,
      );
    for (const source of usable) chosen.set(source.profile.id, source);
  }
  const sources = [...chosen.values()];
  if (options.checkReady !== false) await requireReachableGroups(sources, readyProbeMs(options.env ?? {}));
  return sources;
}

/** How long a launch waits for a selected source's discovery: 3 s, or IVOAI_READY_TIMEOUT_MS (a slow link). */
export function readyProbeMs(env: NodeJS.ProcessEnv): number {
  return Number(env.IVOAI_READY_TIMEOUT_MS) || 3_000;
}

/** Fails unless every group has a member answering discovery (all members are probed at once). */
async function requireReachableGroups(sources: readonly Source[], timeoutMs: number): Promise<void> {
  const probes = new Map(
    sources.map((source) => [
      source.profile.id,
      discover(source.profile.url, timeoutMs).then(
        () => undefined,
        (error: unknown) => (error as Error).message,
      ),
    ]),
  );
  for (const group of groupSources(sources)) {
    const failures: string[] = [];
    for (const member of group.members) {
      const failure = await probes.get(member.profile.id);
      if (failure === undefined) break;
      failures.push(`${member.profile.alias}: ${failure}`);
    }
    if (failures.length === group.members.length) {
      const names = group.members.map((member) => member.profile.alias).join(", ");
      throw new IvoaiError(
        "NETWORK",
        group.members.length === 1
          ? `knowledge source ${names} is unavailable: ${failures[0]?.replace(/^[^:]*: /, "")}`
          : `knowledge sources ${names} (one redundancy group) are all unavailable: ${failures.join("; ")}`,
      );
    }
  }
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
