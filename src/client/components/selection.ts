// Which implementation of an optional component runs, and why: the one decision the launchers, AUTO and
// `ivoai doctor` all read, so that what doctor says is what runs. Probes are bounded (probe.ts) and a failed
// preflight never stops a launch: the seed's fallback is Direct.
import path from "node:path";
import { type AgentName, findExecutable } from "../agents/catalog.js";
import { COMPONENT_MANIFEST } from "../install/index.js";
import { firstLine, runProbe } from "./probe.js";

/** What `ruflo --version` prints for the release manifest/components.json pins (the one admission accepts). */
const REVIEWED_RUFLO = `ruflo v${COMPONENT_MANIFEST.components.find((entry) => entry.name === "ruflo")?.version}`;

export type CompressionProvider = "direct" | "caveman" | "headroom";
export const COMPRESSION_PROVIDERS = [
  "direct",
  "caveman",
  "headroom",
] as const satisfies readonly CompressionProvider[];

/** The default bound of every external probe (doctor's --probe-timeout, in ms). */
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

export interface CompressionSelection {
  requested: CompressionProvider;
  implementation: CompressionProvider;
  /** Bounded, human-readable reason ("direct: headroom preflight failed: not installed"). */
  why: string;
  /** The provider's executable when it runs (null for direct). */
  provider: string | null;
  /** What the provider's preflight said (null when none ran). */
  version: string | null;
}

export interface CompressionInput {
  agent: AgentName;
  knowledgeActive: boolean;
  requested: CompressionProvider;
  managedBin: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * The seed's decision tree: ivoai knowledge active → the official agent directly; otherwise the requested
 * compression provider if its preflight passes, else Direct.
 */
export async function selectCompression(input: CompressionInput): Promise<CompressionSelection> {
  const direct = (why: string): CompressionSelection => ({
    requested: input.requested,
    implementation: "direct",
    why: `direct: ${why}`.slice(0, 200),
    provider: null,
    version: null,
  });
  if (input.knowledgeActive)
    return direct("ivoai memory/context active: exact results must not pass through lossy compression");
  if (input.requested === "direct") return direct("no compression requested (the default)");
  if (input.agent === "opencode") return direct(`${input.requested} does not wrap opencode`);
  const preflight = await compressionPreflight(input.requested, input.managedBin, {
    timeoutMs: input.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
    ...(input.env ? { env: input.env } : {}),
  });
  if (!preflight.ok) return direct(`${input.requested} preflight failed: ${preflight.reason}`);
  return {
    requested: input.requested,
    implementation: input.requested,
    why: `${input.requested}: ${preflight.version ? `${preflight.version} ` : ""}preflight passed`.slice(
      0,
      200,
    ),
    provider: preflight.path,
    version: preflight.version,
  };
}

/** A provider's preflight (headroom: --version and wrap --help; caveman: --version), from the managed bin. */
export async function compressionPreflight(
  provider: "caveman" | "headroom",
  managedBin: string,
  options: { timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<{ ok: true; path: string; version: string | null } | { ok: false; path: string; reason: string }> {
  const file = path.join(managedBin, provider);
  const env = options.env ?? process.env;
  const version = await runProbe(file, ["--version"], { timeoutMs: options.timeoutMs, env });
  if (!version.ok) return { ok: false, path: file, reason: version.reason };
  if (provider === "headroom") {
    const wrap = await runProbe(file, ["wrap", "--help"], { timeoutMs: options.timeoutMs, env });
    if (!wrap.ok) return { ok: false, path: file, reason: `wrap --help: ${wrap.reason}` };
  }
  return { ok: true, path: file, version: firstLine(version.stdout).slice(0, 40) || null };
}

/** The program and leading arguments that run `agent` under the selected provider. */
export function compressionCommand(
  selection: CompressionSelection,
  agent: AgentName,
  agentPath: string,
): string[] {
  if (selection.implementation === "headroom" && selection.provider)
    return [selection.provider, "wrap", agent];
  if (selection.implementation === "caveman" && selection.provider)
    return [selection.provider, "run", "--", agentPath];
  return [agentPath];
}

/** `[auto] coordinator`: "auto" (the default) is Ruflo when installed, with its admission mandatory. */
export type CoordinatorSetting = "auto" | "none" | "ruflo";

export interface CoordinatorSelection {
  setting: CoordinatorSetting;
  implementation: "ruflo" | "none";
  /** The implementation runs for orchestrated sessions (ruflo configured and found). */
  active: boolean;
  why: string;
  /** Nothing stops AUTO: false when ruflo is configured but missing or broken. */
  ok: boolean;
  version: string | null;
  /** The ruflo executable when found. */
  command: string | null;
}

/**
 * `[auto] coordinator` and whether ruflo is on PATH or in the managed bin. With `probeVersion` (doctor) its
 * --version is asked, bounded; AUTO skips that, since Ruflo's admission says the rest.
 */
export async function selectCoordinator(input: {
  setting: CoordinatorSetting;
  managedBin: string;
  env?: NodeJS.ProcessEnv;
  probeVersion?: { timeoutMs: number };
}): Promise<CoordinatorSelection> {
  const env = input.env ?? process.env;
  const command = (await findExecutable("ruflo", input.managedBin, env)) ?? null;
  const where = `not on PATH nor in ${input.managedBin}`;
  const probed =
    command && input.probeVersion
      ? await runProbe(command, ["--version"], { timeoutMs: input.probeVersion.timeoutMs, env })
      : null;
  const version = probed?.ok ? firstLine(probed.stdout).slice(0, 40) || null : null;
  const found = `${version ?? "ruflo"} at ${command}`;
  const broken =
    probed && !probed.ok
      ? `${command} --version failed: ${probed.reason}`
      : probed && version !== REVIEWED_RUFLO
        ? `${command} is ${version ?? "(no version)"}, not the reviewed ${REVIEWED_RUFLO} (its admission refuses it; ` +
          "'ivoai setup --with ruflo' installs the reviewed one)"
        : null;
  const result = (active: boolean, ok: boolean, why: string): CoordinatorSelection => ({
    setting: input.setting,
    implementation: input.setting === "none" || (input.setting === "auto" && !command) ? "none" : "ruflo",
    active,
    why,
    ok,
    version,
    command,
  });
  if (input.setting === "none") {
    const state = !command ? `ruflo is ${where}` : broken ? broken : `${found} is installed`;
    return result(
      false,
      true,
      `none: [auto] coordinator = "none" (${state}; set it to "ruflo" for Ruflo's admission)`,
    );
  }
  if (input.setting === "auto") {
    if (!command)
      return result(
        false,
        true,
        `none: [auto] coordinator = "auto" and ruflo is ${where}: orchestrated sessions run without Ruflo's admission`,
      );
    if (broken)
      return result(
        false,
        false,
        `[auto] coordinator = "auto" found ruflo but ${broken}: AUTO refuses to start`,
      );
    return result(
      true,
      true,
      `ruflo: [auto] coordinator = "auto" and ${found}: every orchestrated session passes its admission`,
    );
  }
  if (!command)
    return result(
      false,
      false,
      `[auto] coordinator = "ruflo" but ruflo is not installed (${where}): AUTO refuses to start`,
    );
  if (broken) return result(false, false, `[auto] coordinator = "ruflo" but ${broken}`);
  return result(true, true, `ruflo: [auto] coordinator = "ruflo", ${found}`);
}
