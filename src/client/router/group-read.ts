// Reading from one logical source (a server, or a redundancy group of them): members in priority order,
// skipping open circuits, failing over on a broken member while time remains. Tool reads and the federated
// surface (resources, prompts, completion) read groups this one way.
import { failureStatus, type SourceOutcome } from "./federation.js";
import type { Source, SourceGroup } from "./selection.js";
import { UpstreamAnswer, type UpstreamPool } from "./upstream.js";

/** How one group answered: a member's value, or why none did (an `answer` is a healthy member's own error). */
export type MemberOutcome<T> =
  | { ok: true; value: T; source: Source; failedOverFrom: string[]; latencyMs: number }
  | {
      ok: false;
      answer?: UpstreamAnswer;
      source: Source;
      status: SourceOutcome["status"] | "answered";
      error: string;
      latencyMs: number;
    };

/** What a group read needs from the router: the pool (its breaker) and the per-read deadline. */
export interface GroupReader {
  pool: Pick<UpstreamPool, "isOpen">;
  deadlineMs: number;
}

/**
 * One group: members in priority order, skipping open circuits (but always trying the last one), failing
 * over on a broken member while time remains. A timeout used the whole budget, so it ends the read; an
 * answered JSON-RPC error is the group's answer.
 */
export async function readInGroup<T>(
  reader: GroupReader,
  group: SourceGroup,
  use: (source: Source) => Promise<T>,
): Promise<MemberOutcome<T>> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const tried: string[] = [];
  let last: MemberOutcome<T> | undefined;
  for (const member of group.members) {
    if (performance.now() - started >= reader.deadlineMs) break;
    if (reader.pool.isOpen(member) && member !== group.members.at(-1)) {
      tried.push(member.profile.alias);
      continue;
    }
    try {
      const value = await use(member);
      return { ok: true, value, source: member, failedOverFrom: tried, latencyMs: elapsed() };
    } catch (error) {
      if (error instanceof UpstreamAnswer) {
        return {
          ok: false,
          answer: error,
          source: member,
          status: "answered",
          error: error.message,
          latencyMs: elapsed(),
        };
      }
      tried.push(member.profile.alias);
      last = {
        ok: false,
        source: member,
        status: failureStatus(error),
        error: (error as Error).message,
        latencyMs: elapsed(),
      };
      if (last.status === "timeout") break;
    }
  }
  return last ?? circuitOpen(group);
}

function circuitOpen(group: SourceGroup): MemberOutcome<never> {
  return {
    ok: false,
    source: group.members[0] as Source,
    status: "circuit_open",
    error: "every member is failing",
    latencyMs: 0,
  };
}
