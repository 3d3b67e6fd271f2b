// Handcrafted sources and groups for the router's unit tests of its pure rules (no server behind them).
import { serverProfileSchema } from "../../config/client-config.js";
import type { Source, SourceGroup } from "./selection.js";

/** A source named `alias`; `group` makes it a member of that redundancy group. */
export function sourceOf(alias: string, options: { priority?: number; group?: string } = {}): Source {
  const profile = serverProfileSchema.parse({
    alias,
    url: `http://127.0.0.1:1/${alias}`,
    purpose: options.group ?? alias,
    ...(options.group ? { redundancy_group: options.group } : {}),
    ...(options.priority === undefined ? {} : { priority: options.priority }),
  });
  return { profile: { ...profile, id: `srv_${alias}` }, token: `token-${alias}` };
}

/** A group of the given members, primary first, keyed like selection's groups. */
export function groupOf(key: string, ...members: Source[]): SourceGroup {
  return { key, purpose: members[0]?.profile.purpose ?? key, members };
}
