// One row of doctor's component matrix per fact that was found: pure functions from what a probe saw to the
// row a person (and `--json`) reads — whether the component is supported here, healthy, which implementation is
// active and why, whether ivoai needs it, and what to do next.
import type { NativeSqliteHealth } from "../../shared/native-sqlite.js";
import type { CompressionSelection, CoordinatorSelection } from "../components/selection.js";
import type { ComponentRow, Fact, ServerRow } from "./doctor.js";
import { CONNECT_FIRST_SERVER, componentNext, MATRIX_NEXT, serverNext } from "./next-steps.js";

export type MatrixStatus = "supported" | "unsupported" | "unknown" | "not_exposed";

export interface MatrixRow {
  component: string;
  status: MatrixStatus;
  healthy: Fact;
  /** The implementation that runs (null when none does). */
  active: string | null;
  why: string;
  /** Unhealthy, it makes doctor fail (exit 1). */
  required: boolean;
  version: string | null;
  detail: string;
  next: string | null;
}

type RowFacts = Omit<MatrixRow, "version" | "detail" | "next"> &
  Partial<Pick<MatrixRow, "version" | "detail" | "next">>;

const row = (facts: RowFacts): MatrixRow => ({ version: null, detail: "", next: null, ...facts });

export function nativeSqliteMatrixRow(health: NativeSqliteHealth): MatrixRow {
  return health.healthy
    ? row({
        component: "native-sqlite",
        status: "supported",
        healthy: "yes",
        active: "better-sqlite3",
        why: `loads on Node.js ${process.version} (ABI ${process.versions.modules})`,
        required: true,
        version: health.version,
        detail: health.path,
      })
    : row({
        component: "native-sqlite",
        status: "unsupported",
        healthy: "no",
        active: null,
        why: health.message,
        required: true,
        detail: health.path,
        next: "npm rebuild better-sqlite3 where ivoai is installed (see WHY)",
      });
}

/** An agent CLI from doctor's component row (installed, --version, login status). */
export function agentMatrixRow(agent: ComponentRow & { login_detail?: string }): MatrixRow {
  const base = { component: `agent:${agent.component}`, required: false, version: agent.version };
  const next = componentNext(agent);
  if (agent.installed === "no")
    return row({ ...base, status: "unsupported", healthy: "unknown", active: null, why: agent.detail, next });
  if (agent.available === "no")
    return row({
      ...base,
      status: /timed out after/.test(agent.detail) ? "unknown" : "unsupported",
      healthy: "no",
      active: null,
      why: agent.detail,
      detail: agent.path ?? "",
      next,
    });
  const where = `${agent.version ?? "?"} (${agent.detail})`;
  const login = agent.login_detail ? ` (${agent.login_detail})` : "";
  const [healthy, why]: [Fact, string] =
    agent.logged_in === "logged_in"
      ? ["yes", `${where}, logged in${login}`]
      : agent.logged_in === "logged_out"
        ? ["no", `${where}, logged out`]
        : ["unknown", `${where} starts; its login is not known${login}`];
  return row({
    ...base,
    status: "supported",
    healthy,
    active: agent.component,
    why,
    detail: agent.path ?? "",
    next,
  });
}

/** A connected ivoai server: reachable, ready, its protocol. */
export function serverMatrixRow(server: ServerRow, url: string): MatrixRow {
  const base = { component: `server:${server.alias}`, required: server.enabled, detail: url };
  const next = serverNext(server, url);
  if (!server.enabled)
    return row({ ...base, status: "unknown", healthy: "unknown", active: null, why: "disabled", next });
  if (server.readiness === "unknown") {
    const conflict = /speaks protocol/.test(server.detail);
    return row({
      ...base,
      status: conflict || server.tls === "invalid" ? "unsupported" : "unknown",
      healthy: "no",
      active: null,
      why: `${server.reachable === "no" ? "unreachable: " : ""}${server.detail}`,
      next,
    });
  }
  const degraded = server.detail ? `, ${server.detail}` : "";
  return row({
    ...base,
    status: "supported",
    healthy: "yes",
    active: `protocol ${server.protocol_version}`,
    why: `reachable, ${server.readiness}, protocol ${server.protocol_version}${degraded}`,
    next,
  });
}

/**
 * Context and memory: on a client they are the connected servers ("remote"); which backend each server keeps
 * them in (embedded SQLite, PostgreSQL) and whether it embeds with TEI are not in its discovery document.
 */
export function knowledgeMatrixRows(servers: readonly ServerRow[]): MatrixRow[] {
  const enabled = servers.filter((server) => server.enabled);
  if (enabled.length === 0)
    return [
      row({
        component: "knowledge",
        status: "unknown",
        healthy: "unknown",
        active: null,
        why: "no ivoai server connected: agents start without ivoai memory and context",
        required: false,
        next: CONNECT_FIRST_SERVER,
      }),
      row({
        component: "embedder",
        status: "unknown",
        healthy: "unknown",
        active: "none",
        why: "none: the client embeds nothing, and no server is connected",
        required: false,
      }),
    ];
  const ready = enabled.filter((server) => server.readiness !== "unknown");
  const serving = (feature: "context" | "memory") =>
    ready.filter((server) => server.features?.[feature]).map((server) => server.alias);
  const names = (list: string[]) => (list.length > 0 ? list.join(", ") : "none reachable");
  const hidden = "not in the servers' discovery document (their admin sees it: ivoai server status)";
  return [
    row({
      component: "knowledge",
      status: ready.length > 0 ? "supported" : "unknown",
      healthy: ready.length > 0 ? "yes" : "no",
      active: ready.length > 0 ? "remote" : null,
      why:
        `remote: context from ${names(serving("context"))}; memory from ${names(serving("memory"))} ` +
        `(${ready.length} of ${enabled.length} enabled servers reachable)`,
      required: false,
    }),
    row({
      component: "knowledge:backend",
      status: "not_exposed",
      healthy: "unknown",
      active: null,
      why: `embedded SQLite or PostgreSQL: ${hidden}`,
      required: false,
    }),
    row({
      component: "embedder",
      status: "not_exposed",
      healthy: "unknown",
      active: null,
      why: `none or tei: ${hidden}`,
      required: false,
    }),
  ];
}

/** `compression`: what a launch with no --compression runs; one sub-row per provider for --compression X. */
export function compressionMatrixRows(
  chosen: CompressionSelection,
  providers: readonly CompressionSelection[],
  managedBin: string,
): MatrixRow[] {
  return [
    row({
      component: "compression",
      status: "supported",
      healthy: "yes",
      active: chosen.implementation,
      why: chosen.why,
      required: false,
      detail: "without --compression",
    }),
    ...providers.map((plan) => {
      const ran = plan.implementation === plan.requested;
      const missing = / preflight failed: not installed$/.test(plan.why);
      return row({
        component: `compression:${plan.requested}`,
        status: ran ? "supported" : / timed out after /.test(plan.why) ? "unknown" : "unsupported",
        healthy: ran ? "yes" : missing ? "unknown" : "no",
        active: plan.implementation,
        why: plan.why,
        required: false,
        version: plan.version,
        detail: `--compression ${plan.requested} (codex, claude; direct while ivoai knowledge is active)`,
        next: ran ? null : MATRIX_NEXT.compression(plan.requested, managedBin, missing),
      });
    }),
  ];
}

/** The lifecycle coordinator AUTO uses; configured ruflo that cannot run is required (AUTO refuses then). */
export function coordinatorMatrixRow(
  selected: Pick<CoordinatorSelection, "implementation" | "active" | "why" | "ok" | "version"> &
    Partial<Pick<CoordinatorSelection, "setting" | "command">>,
): MatrixRow {
  const configured = selected.implementation === "ruflo";
  const absent = selected.setting === "auto" && !selected.command;
  return row({
    component: "coordinator",
    status: selected.ok ? "supported" : "unsupported",
    healthy: selected.ok ? "yes" : "no",
    active: selected.active ? selected.implementation : "none",
    why: selected.why,
    required: configured,
    version: selected.version,
    next: !selected.ok ? MATRIX_NEXT.coordinator : absent ? MATRIX_NEXT.coordinatorOptional : null,
  });
}

/** What doctor found of the packaged skill (skills/ivoai-memory-context/SKILL.md beside the program). */
export type SkillCheck =
  | { found: true; file: string; matches: boolean; digest: string }
  | { found: false; file: string | null };

export function skillsMatrixRow(check: SkillCheck, servedDigest: string): MatrixRow {
  const base = { component: "skills", required: false, detail: check.file ?? "" };
  if (!check.found)
    return row({
      ...base,
      status: "unsupported",
      healthy: "no",
      active: null,
      why: check.file ? `${check.file} not found` : "the ivoai package folder was not found",
      next: MATRIX_NEXT.skills,
    });
  return check.matches
    ? row({
        ...base,
        status: "supported",
        healthy: "yes",
        active: "ivoai-memory-context",
        why: `packaged SKILL.md is the one skills/get serves (${servedDigest.slice(0, 19)}…)`,
      })
    : row({
        ...base,
        status: "supported",
        healthy: "no",
        active: "ivoai-memory-context",
        why: `packaged SKILL.md (${check.digest.slice(0, 19)}…) differs from the one skills/get serves (${servedDigest.slice(0, 19)}…)`,
        next: MATRIX_NEXT.skills,
      });
}

/** The client's session store: private JSON records under the XDG state dir. */
export function storeMatrixRow(dir: string, state: "writable" | "absent" | string): MatrixRow {
  const ok = state === "writable" || state === "absent";
  return row({
    component: "store",
    status: ok ? "supported" : "unsupported",
    healthy: ok ? "yes" : "no",
    active: "session files",
    why:
      state === "writable"
        ? "session records (JSON, atomic writes, a lock) in the XDG state dir"
        : state === "absent"
          ? "session records: the folder is created by the first session"
          : `cannot write session records: ${state}`,
    required: true,
    detail: dir,
    next: ok ? null : `make ${dir} writable by this user (mode 0700)`,
  });
}

/** What a user MCP server's probe said (initialize, tools/list), or that it is disabled. */
export type UserServerOutcome =
  | { name: string; enabled: false; required: boolean }
  | {
      name: string;
      enabled: true;
      required: boolean;
      ok: boolean;
      tools: string[];
      hidden: string[];
      missing: string[];
      ms: number;
      error?: string;
    };

export function userServerMatrixRow(outcome: UserServerOutcome): MatrixRow {
  const base = { component: `user-mcp:${outcome.name}`, required: outcome.required };
  if (!outcome.enabled)
    return row({ ...base, status: "unknown", healthy: "unknown", active: null, why: "disabled" });
  if (!outcome.ok)
    return row({
      ...base,
      status: "unknown",
      healthy: "no",
      active: null,
      why: outcome.error ?? "its probe failed",
      next: MATRIX_NEXT.userServer(outcome.name),
    });
  const notes = [
    outcome.hidden.length > 0 ? `${outcome.hidden.length} hidden by its allow-list` : "",
    outcome.missing.length > 0 ? `allowed but absent: ${outcome.missing.join(", ")}` : "",
  ].filter(Boolean);
  return row({
    ...base,
    status: "supported",
    healthy: "yes",
    active: `${outcome.tools.length} tools`,
    why: `initialize and tools/list in ${outcome.ms} ms: ${outcome.tools.length} tools${notes.length ? ` (${notes.join("; ")})` : ""}`,
    detail: outcome.tools.join(", ").slice(0, 200),
  });
}
