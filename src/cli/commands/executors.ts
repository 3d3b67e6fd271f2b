// `ivoai executors`: what AUTO can run on — each official CLI, its login, whether its quota admits work, its
// quota windows and its model catalogue with opaque ids. Metadata only: no credential is read or printed.
import path from "node:path";
import { createQuotaManager, type QuotaManager } from "../../client/auto/quota/admission.js";
import { type ExecutorInfo, loadExecutorRegistry } from "../../client/auto/registry.js";
import { openRegistry } from "../../client/connections/registry.js";
import { defineCommand } from "../command.js";
import { formatTable } from "../output.js";

interface ExecutorReport {
  name: string;
  path: string | null;
  version: string | null;
  login: string;
  login_detail: string;
  admitted: boolean;
  admission: string;
  quota: {
    window: string;
    used_percent: number | null;
    status: string | null;
    resets_at: string | null;
    source: string;
    observed_at: string;
  }[];
  catalogue: string;
  models: {
    id: string;
    model: string;
    effort: string;
    tier: number;
    context_window: number;
    /** Where the model comes from: the CLI's own runtime list, or ivoai's static catalogue. */
    source: "model/list" | "catalogue";
    /** Confirmed at run time (the CLI itself listed it, and it is logged in); never true for a catalogue entry. */
    verified: boolean;
    /** AUTO may schedule it: the CLI is installed and logged in, and the model is in its list or catalogue. */
    usable: boolean;
  }[];
  problems: string[];
}

export const executorsCommand = defineCommand({
  name: "executors",
  summary: "Show the agent CLIs AUTO can use: login, quota admission, quota windows and models",
  description:
    "Results are cached for 10 minutes in the state dir; --refresh probes the CLIs again (codex through\n" +
    "'codex app-server', which also records its quota windows). Claude's quota comes from the status line\n" +
    "of interactive 'ivoai claude' sessions. VERIFIED means the CLI listed the model at run time (codex\n" +
    "model/list); Claude's models are ivoai's static catalogue of its aliases, never shown as verified.",
  json: true,
  options: { refresh: { type: "boolean", description: "probe the CLIs now instead of using the cache" } },
  async run(ctx) {
    const paths = openRegistry(ctx.env).paths;
    const onProblem = (message: string) => ctx.out.note(`ivoai: ${message}`);
    const registry = await loadExecutorRegistry({
      stateDir: paths.stateDir,
      managedBin: path.join(paths.dataDir, "bin"),
      env: ctx.env,
      refresh: ctx.options.refresh === true,
      onProblem,
    });
    const quota = createQuotaManager({ stateDir: paths.stateDir, onProblem });
    const executors: ExecutorReport[] = [];
    for (const info of registry.executors) {
      const admission = await admissionOf(info, quota);
      executors.push({
        name: info.name,
        path: info.path,
        version: info.version,
        login: info.login,
        login_detail: info.login_detail,
        admitted: admission.admitted,
        admission: admission.reason,
        quota: (await quota.current(info.name))
          .map(({ executor: _executor, ...window }) => window)
          .sort((a, b) => a.window.localeCompare(b.window)),
        catalogue: info.catalogue,
        models: info.profiles.map((profile) => ({
          id: profile.id,
          model: profile.model,
          effort: profile.effort,
          tier: profile.tier,
          context_window: profile.contextWindow,
          source: info.catalogue === "model/list" ? ("model/list" as const) : ("catalogue" as const),
          verified: info.catalogue === "model/list" && profile.verified,
          usable: profile.verified,
        })),
        problems: info.problems,
      });
    }
    ctx.out.data({ checked_at: registry.checked_at, executors }, (report) =>
      [...report.executors.map(render), `(CLIs checked at ${report.checked_at})`].join("\n\n"),
    );
    return 0;
  },
});

/**
 * Quota admission, but only for a CLI AUTO could run at all: a missing or logged-out one is never shown as
 * admitted (the scheduler leaves it out whatever its quota says, see chooseExecutors).
 */
async function admissionOf(
  info: ExecutorInfo,
  quota: QuotaManager,
): Promise<{ admitted: boolean; reason: string }> {
  if (info.path === null) return { admitted: false, reason: `${info.name} is not installed` };
  if (info.login === "logged_out") return { admitted: false, reason: `${info.name} is not logged in` };
  return quota.admit(info.name);
}

function render(executor: ExecutorReport): string {
  const lines = [
    `${executor.name}: ${executor.path ?? "not installed"}${executor.version ? ` (${executor.version})` : ""}`,
    `  login:    ${executor.login.replace("_", " ")}${executor.login_detail ? ` — ${executor.login_detail}` : ""}`,
    `  admitted: ${executor.admitted ? "yes" : "NO"} — ${executor.admission}`,
  ];
  for (const problem of executor.problems) lines.push(`  problem:  ${problem}`);
  lines.push(
    "  quota:",
    indent(
      formatTable(
        ["WINDOW", "USED", "STATUS", "RESETS AT", "SOURCE", "OBSERVED AT"],
        executor.quota.map((window) => [
          window.window,
          window.used_percent === null ? "-" : `${window.used_percent}%`,
          window.status ?? "-",
          window.resets_at ?? "-",
          window.source,
          window.observed_at,
        ]),
        "no quota data yet",
      ),
    ),
    `  models (${executor.catalogue === "model/list" ? `listed by ${executor.name} at run time (model/list)` : "ivoai's static catalogue: not verified at run time"}):`,
    indent(
      formatTable(
        ["ID", "MODEL", "EFFORT", "TIER", "CONTEXT", "VERIFIED", "USABLE"],
        executor.models.map((model) => [
          model.id,
          model.model,
          model.effort,
          String(model.tier),
          String(model.context_window),
          model.verified ? "yes" : model.source === "catalogue" ? "catalogue" : "no",
          model.usable ? "yes" : "no",
        ]),
      ),
    ),
  );
  return lines.join("\n");
}

const indent = (text: string) =>
  text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
