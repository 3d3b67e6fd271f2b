// What the launcher knows of the knowledge sources before any turn has run: the configured (enabled) servers and
// those the session's selection leaves out, with why. Once a turn has gathered knowledge, its own record of the
// sources (AutoState.sources, in the AUTO status) is what the /ivoai panel shows instead.
import type { SourceNote } from "./status.js";

/** Configured sources and the ones left out of this frontend session. */
export interface SourceSelection {
  configured: string[];
  excluded: SourceNote[];
}

/** A registry profile, as far as the selection is concerned. */
export interface ProfileFacts {
  id: string;
  alias: string;
  enabled: boolean;
  /** Whether a credential for it is stored. */
  credentialed: boolean;
}

const MAX_LISTED = 16;

/**
 * `selectedIds` are the sources the launcher selected; `explicit` says whether the user named them
 * (--knowledge-source) or the selection was every enabled server.
 */
export function sourceSelection(
  profiles: readonly ProfileFacts[],
  selectedIds: ReadonlySet<string>,
  explicit: boolean,
): SourceSelection {
  const excluded: SourceNote[] = [];
  for (const profile of profiles) {
    if (selectedIds.has(profile.id)) continue;
    excluded.push({ alias: profile.alias, reason: exclusionReason(profile, explicit) });
  }
  return {
    configured: profiles
      .filter((profile) => profile.enabled)
      .map((profile) => profile.alias)
      .slice(0, MAX_LISTED),
    excluded: excluded.slice(0, MAX_LISTED),
  };
}

function exclusionReason(profile: ProfileFacts, explicit: boolean): string {
  if (!profile.enabled) return "disabled";
  if (!profile.credentialed) return "no stored credential; connect it again";
  // Without a selection every usable server is taken unless the selection itself failed at the start.
  return explicit ? "not named by --knowledge-source" : "not ready when the session started";
}
