// The model catalogue the managed OpenCode shows (seed 002, "native model selection"): `auto` plus one opaque
// entry per verified, usable executor profile. Ids resolve here, fail-closed, to an executor + native model +
// effort; an explicit entry that is no longer usable is an error naming it, never another model.

import { IvoaiError } from "../../shared/errors.js";
import { EXECUTORS, type ModelProfile } from "../auto/contracts.js";
import type { ExecutorInfo, ExecutorRegistry } from "../auto/registry.js";
import type { CatalogueEntry, ModelSelection } from "./contracts.js";

/** The catalogue id of "the scheduler decides". */
export const AUTO_MODEL_ID = "auto";
export const AUTO_MODEL_NAME = "ivoai auto (scheduler decides)";
/** Every effort the executor registry may put in a profile (registry.ts CATALOGUE_EFFORTS), cheapest first. */
export const KNOWN_EFFORTS: readonly string[] = ["minimal", "low", "medium", "high", "xhigh"];

const AUTO_ENTRY: CatalogueEntry = { id: AUTO_MODEL_ID, name: AUTO_MODEL_NAME, selection: { kind: "auto" } };

/** Why an executor's profiles cannot run now, or null when they can. */
function unusable(info: ExecutorInfo): string | null {
  if (info.path === null) return `${info.name} is not installed`;
  if (info.login === "logged_out") return `${info.name} is not logged in`;
  return null;
}

function effortRank(effort: string): number {
  const at = KNOWN_EFFORTS.indexOf(effort);
  return at === -1 ? KNOWN_EFFORTS.length : at;
}

export function entryName(profile: Pick<ModelProfile, "executor" | "model" | "effort">): string {
  return `${profile.executor} · ${profile.model} · ${profile.effort}`;
}

/**
 * `auto` first, then every verified profile of an installed executor that is not logged out: executors in
 * their fixed order, models in the registry's order (codex lists its current models first), efforts cheapest first.
 */
export function frontendCatalogue(registry: ExecutorRegistry): CatalogueEntry[] {
  const entries: CatalogueEntry[] = [AUTO_ENTRY];
  const seen = new Set<string>([AUTO_MODEL_ID]);
  for (const name of EXECUTORS) {
    const info = registry.executors.find((entry) => entry.name === name);
    if (!info || unusable(info) !== null) continue;
    const models = [...new Set(info.profiles.map((profile) => profile.model))];
    const profiles = info.profiles
      .filter((profile) => profile.verified && profile.executor === name)
      .sort(
        (a, b) =>
          models.indexOf(a.model) - models.indexOf(b.model) || effortRank(a.effort) - effortRank(b.effort),
      );
    for (const profile of profiles) {
      if (seen.has(profile.id)) continue;
      seen.add(profile.id);
      entries.push({
        id: profile.id,
        name: entryName(profile),
        selection: {
          kind: "explicit",
          id: profile.id,
          executor: profile.executor,
          model: profile.model,
          effort: profile.effort,
        },
      });
    }
  }
  return entries;
}

export type SelectionResult = { ok: true; selection: ModelSelection } | { ok: false; error: string };

/**
 * The selection behind a catalogue id, from the registry as it is now. Fail-closed: an unknown id, or a profile
 * no longer verified, installed or logged in, is an error naming the model — never a fallback to another one.
 */
export function resolveSelection(id: string, registry: ExecutorRegistry): SelectionResult {
  if (id === AUTO_MODEL_ID) return { ok: true, selection: AUTO_ENTRY.selection };
  const entry = frontendCatalogue(registry).find((candidate) => candidate.id === id);
  if (entry) return { ok: true, selection: entry.selection };
  for (const info of registry.executors) {
    const profile = info.profiles.find((candidate) => candidate.id === id);
    if (!profile) continue;
    const why =
      unusable(info) ??
      (profile.verified ? `${info.name} cannot run it now` : `${info.name} did not confirm it is available`);
    return {
      ok: false,
      error: `model "${entryName(profile)}" (${id}) is unavailable: ${why}; ivoai does not substitute another model (pick it again when available, or choose "${AUTO_MODEL_ID}")`,
    };
  }
  return {
    ok: false,
    error: `model "${printable(id)}" is not in ivoai's catalogue (it may have been removed); choose "${AUTO_MODEL_ID}" or a listed model`,
  };
}

/** The efforts the current catalogue offers (the bridge accepts only these), cheapest first. */
export function validEfforts(registry: ExecutorRegistry): string[] {
  const efforts = new Set<string>();
  for (const entry of frontendCatalogue(registry)) {
    if (entry.selection.kind === "explicit") efforts.add(entry.selection.effort);
  }
  return [...efforts].sort((a, b) => effortRank(a) - effortRank(b) || a.localeCompare(b));
}

/**
 * Whether OpenCode's reasoning effort (its "variant") fits the selection: an explicit entry takes only its own
 * effort (or none); `auto` takes any effort in `known` (default: every effort the registry may use) or none.
 */
export function effortAllowed(
  selection: ModelSelection,
  effort: string | null,
  known: readonly string[] = KNOWN_EFFORTS,
): boolean {
  if (effort === null) return true;
  if (selection.kind === "explicit") return effort === selection.effort;
  return known.includes(effort);
}

/** OpenCode's model entry: its picker's name, and for `auto` the efforts its variant picker offers. */
export interface OpencodeModelConfig {
  name: string;
  /** Variant name → provider options; `reasoningEffort` reaches the bridge as the body's `reasoning_effort`. */
  variants?: Record<string, { reasoningEffort: string }>;
}

/** The `provider.ivoai` object of managed OpenCode's config. */
export interface OpencodeProviderConfig {
  npm: "@ai-sdk/openai-compatible";
  name: "ivoai";
  options: { baseURL: string; apiKey: string };
  models: Record<string, OpencodeModelConfig>;
}

/**
 * OpenCode's provider entry for the bridge. The secret appears only as an `{env:NAME}` reference, which OpenCode
 * resolves from its own environment. `auto` declares one variant per effort the entries use, so OpenCode's
 * variant picker lists exactly the valid efforts (an undeclared variant is sent as no effort at all); an
 * explicit entry's effort is part of the entry, so it declares none.
 */
export function opencodeProviderConfig(
  entries: readonly CatalogueEntry[],
  bridgeUrl: string,
  secretEnv: string,
): OpencodeProviderConfig {
  if (!/^[A-Z_][A-Z0-9_]{0,63}$/.test(secretEnv))
    throw new IvoaiError(
      "USAGE",
      `invalid environment variable name for the bridge secret: ${printable(secretEnv)}`,
    );
  const url = parseLoopbackUrl(bridgeUrl);
  const efforts = [
    ...new Set(
      entries.flatMap((entry) => (entry.selection.kind === "explicit" ? [entry.selection.effort] : [])),
    ),
  ].sort((a, b) => effortRank(a) - effortRank(b) || a.localeCompare(b));
  const models: Record<string, OpencodeModelConfig> = {};
  for (const entry of entries) {
    models[entry.id] =
      entry.selection.kind === "auto" && efforts.length > 0
        ? {
            name: entry.name,
            variants: Object.fromEntries(efforts.map((effort) => [effort, { reasoningEffort: effort }])),
          }
        : { name: entry.name };
  }
  return {
    npm: "@ai-sdk/openai-compatible",
    name: "ivoai",
    options: { baseURL: url, apiKey: `{env:${secretEnv}}` },
    models,
  };
}

/** The bridge's base URL: plain http on a loopback address, with nothing secret in it. */
function parseLoopbackUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new IvoaiError("USAGE", `invalid bridge URL: ${printable(value)}`);
  }
  const loopback = ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname);
  if (url.protocol !== "http:" || !loopback || url.username || url.password || url.search || url.hash)
    throw new IvoaiError(
      "USAGE",
      "the bridge URL must be http on a loopback address, without credentials or query",
    );
  return value.replace(/\/+$/, "");
}

/** A wire value shown in a message: one line, bounded. */
function printable(value: string): string {
  const line = value.replace(/[^\x20-\x7e]/g, "?");
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
}
