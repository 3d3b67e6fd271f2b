// The seed's decision tree: ivoai knowledge active → the official agent directly; otherwise the requested
// compression provider if its preflight is healthy, else Direct. Preflights are bounded and never fatal.
import { execFile } from "node:child_process";
import path from "node:path";
import type { AgentName } from "./catalog.js";

export type CompressionProvider = "direct" | "caveman" | "headroom";

export interface LaunchPlan {
  requested: CompressionProvider;
  effective: CompressionProvider;
  /** Bounded, human-readable reason, recorded in the session telemetry. */
  reason: string;
  /** The program and leading arguments that run the agent. */
  command: string[];
}

function probe(file: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs }, (error, stdout) =>
      error ? reject(error) : resolve(stdout.trim()),
    );
  });
}

export async function planLaunch(input: {
  agent: AgentName;
  agentPath: string;
  knowledgeActive: boolean;
  requested: CompressionProvider;
  managedBin: string;
  timeoutMs?: number;
}): Promise<LaunchPlan> {
  const direct = (reason: string): LaunchPlan => ({
    requested: input.requested,
    effective: "direct",
    reason: reason.slice(0, 200),
    command: [input.agentPath],
  });
  if (input.knowledgeActive) {
    return direct("ivoai memory/context active: exact results must not pass through lossy compression");
  }
  if (input.requested === "direct") return direct("direct requested");
  if (input.agent === "opencode") return direct(`${input.requested} does not wrap opencode`);
  const timeoutMs = input.timeoutMs ?? 5_000;
  if (input.requested === "headroom") {
    const headroom = path.join(input.managedBin, "headroom");
    try {
      const version = await probe(headroom, ["--version"], timeoutMs);
      await probe(headroom, ["wrap", "--help"], timeoutMs);
      return {
        requested: "headroom",
        effective: "headroom",
        reason: `headroom ${version.slice(0, 40)} preflight passed`,
        command: [headroom, "wrap", input.agent],
      };
    } catch (error) {
      return direct(
        `headroom preflight failed (${(error as { code?: string }).code ?? "error"}); it installs from PyPI, which is unreachable here`,
      );
    }
  }
  const caveman = path.join(input.managedBin, "caveman");
  try {
    await probe(caveman, ["--version"], timeoutMs);
    return {
      requested: "caveman",
      effective: "caveman",
      reason: "caveman preflight passed",
      command: [caveman, "run", "--", input.agentPath],
    };
  } catch (error) {
    return direct(`caveman preflight failed (${(error as { code?: string }).code ?? "error"})`);
  }
}
