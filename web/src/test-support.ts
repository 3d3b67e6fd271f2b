// A fake of the gateway's console API for component tests: the real routes and JSON shapes, state in memory,
// every request recorded. Installed as the global fetch (the app's only boundary).
import { type RenderResult, render } from "@testing-library/react";
import { createElement } from "react";
import { vi } from "vitest";
import { CONSOLE_ROLE_SCOPES } from "../../src/protocol/scopes.js";
import { ConsoleApp } from "./app.js";
import type {
  ApprovalChanges,
  ApprovalRecord,
  ApprovalSummary,
  BulkDecisionResult,
  ConsoleSession,
  DiffLine,
  EnrolledClient,
} from "./types.js";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

export const SESSION: ConsoleSession = {
  name: "Ana",
  role: "approver",
  scopes: [...CONSOLE_ROLE_SCOPES.approver],
  csrf_token: "csrf-test-token",
  expires_at: "2099-01-01T00:00:00.000Z",
  idle_expires_at: "2099-01-01T00:00:00.000Z",
};

export function approval(index: number, overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: `apr_${String(index).padStart(5, "0")}`,
    status: "pending",
    tool: "memory_write_page",
    action: "write_page",
    scope: "team",
    path: `notes/page-${index}.md`,
    requester: `agent-${index % 3}`,
    session_id: `ses_${index}`,
    summary: `Write page ${index}`,
    created_at: new Date(Date.now() - 60_000).toISOString(),
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    decided_by: null,
    decided_at: null,
    diff: `--- a/notes/page-${index}.md\n+++ b/notes/page-${index}.md\n@@ -1 +1 @@\n-old ${index}\n+new ${index}`,
    payload: {},
    base_version: 1,
    reason: null,
    ...overrides,
  };
}

function summaryOf(record: ApprovalRecord, names: Record<string, string>): ApprovalSummary {
  const { diff, payload, base_version: _base, reason: _reason, ...rest } = record;
  return {
    ...rest,
    diff_bytes: diff.length,
    payload_bytes: JSON.stringify(payload).length,
    requester_name: names[record.requester] ?? null,
  };
}

/**
 * The body lines of a unified diff text (headers and hunk lines dropped), numbered on each side: what the
 * gateway's `changes.body` holds, for a fake record that only has its `diff` text.
 */
export function bodyLinesOf(diff: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let old = 0;
  let next = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("@@") || line === "") continue;
    const mark = line[0];
    const text = line.slice(1).replace(/^ /, "");
    if (mark === "+") lines.push({ op: "+", old: null, new: ++next, text });
    else if (mark === "-") lines.push({ op: "-", old: ++old, new: null, text });
    else lines.push({ op: "=", old: ++old, new: ++next, text });
  }
  return lines;
}

/** What the fake gateway says a request changes when the test gave no `changes` for it: its body diff only. */
export function defaultChanges(record: ApprovalRecord): ApprovalChanges {
  const lines = bodyLinesOf(record.diff);
  const added = lines.filter((line) => line.op === "+").length;
  const removed = lines.filter((line) => line.op === "-").length;
  return {
    effect: "replace",
    headline: `Replaces ${record.scope}:${record.path}`,
    metadata_only: added + removed === 0,
    items:
      added + removed > 0
        ? [
            {
              field: "body",
              severity: "change",
              text: `Body: ${added} added, ${removed} removed`,
              added,
              removed,
            },
          ]
        : [],
    body: { added, removed, lines, coarse: false },
  };
}

export interface FakeGateway {
  requests: RecordedRequest[];
  approvals: ApprovalRecord[];
  /** What each request changes, by id (default: `defaultChanges`). */
  changes: Record<string, ApprovalChanges>;
  /** Every decision applied, one entry per request decided: a request decided twice would show twice. */
  decisions: { id: string; approve: boolean }[];
  /** A valid sign-in code (single use). */
  code: string;
  signedIn: boolean;
  /** When set, every cookie-authenticated request answers 401 with this error code. */
  expire: (code?: string) => void;
  fetch: typeof fetch;
}

export function json(status: number, body: unknown): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

export interface FakeGatewayOptions {
  approvals?: ApprovalRecord[];
  /** What requests change, by id (default: their body diff only). */
  changes?: Record<string, ApprovalChanges>;
  /** Requesters' names by credential id (default: none known). */
  names?: Record<string, string>;
  signedIn?: boolean;
  /** The session's role and scopes (default: an approver). */
  session?: Partial<ConsoleSession>;
  /** More routes by "METHOD /path" (no query): a JSON body to answer 200 with, or a function of the request. */
  routes?: Record<string, unknown>;
}

export function createFakeGateway(options: FakeGatewayOptions = {}): FakeGateway {
  const session = { ...SESSION, ...options.session };
  const names = options.names ?? {};
  let expiredWith: string | null = null;
  const gateway: FakeGateway = {
    requests: [],
    approvals: options.approvals ?? [],
    changes: options.changes ?? {},
    decisions: [],
    code: "ivoai_con_testcode",
    signedIn: options.signedIn ?? true,
    expire: (code = "session_expired") => {
      expiredWith = code;
    },
    fetch: async (input, init) => {
      const url = new URL(String(input), "http://console.test");
      const method = init?.method ?? "GET";
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries((init?.headers as Record<string, string>) ?? {})) {
        headers[key.toLowerCase()] = value;
      }
      const body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
      gateway.requests.push({ method, path: url.pathname + url.search, headers, body });
      const path = url.pathname;

      if (path === "/v1/console/session" && method === "POST") {
        if ((body as { code?: string })?.code !== gateway.code) {
          return json(401, { error: "invalid_code", message: "The sign-in code is not valid." });
        }
        gateway.code = "used";
        gateway.signedIn = true;
        expiredWith = null;
        return json(200, session);
      }
      if (expiredWith) {
        // Like the gateway: the first answer about an ended session also clears the cookie, so requests after
        // it carry none and get a plain 401.
        const code = expiredWith;
        if (code === "session_expired") {
          expiredWith = null;
          gateway.signedIn = false;
        }
        return json(401, { error: code, message: "The console session expired." });
      }
      if (!gateway.signedIn) return json(401, { error: "unauthorized", message: "Sign in first." });
      if (method !== "GET" && headers["x-csrf-token"] !== SESSION.csrf_token) {
        return json(403, { error: "csrf", message: "Missing or stale CSRF token." });
      }
      if (path === "/v1/console/session") {
        if (method === "DELETE") {
          gateway.signedIn = false;
          return new Response(null, { status: 204 });
        }
        return json(200, session);
      }
      const extra = options.routes?.[`${method} ${path}`];
      if (extra !== undefined) {
        const request = gateway.requests[gateway.requests.length - 1] as RecordedRequest;
        return typeof extra === "function"
          ? (extra as (r: RecordedRequest) => Response)(request)
          : json(200, extra);
      }
      if (path === "/v1/approvals/counts") {
        const counts = { pending: 0, applied: 0, rejected: 0, expired: 0, conflict: 0 };
        for (const record of gateway.approvals) counts[record.status] += 1;
        return json(200, counts);
      }
      if (path === "/v1/approvals" && method === "GET") {
        const limit = Math.min(200, Number(url.searchParams.get("limit") ?? 50));
        const start = Number(url.searchParams.get("cursor") ?? 0);
        const matching = gateway.approvals.filter((record) => matchesQuery(record, url.searchParams, names));
        const page = matching.slice(start, start + limit).map((record) => summaryOf(record, names));
        const next = start + limit < matching.length ? String(start + limit) : null;
        return json(200, { approvals: page, next_cursor: next });
      }
      if (path === "/v1/approvals/decide" && method === "POST") {
        const { ids, approve, reason } = body as { ids: string[]; approve: boolean; reason?: string };
        const results: BulkDecisionResult[] = ids.map((id) => {
          const record = gateway.approvals.find((item) => item.id === id);
          if (!record) return { id, outcome: "not_found" };
          if (record.status !== "pending") return { id, outcome: "already_decided" };
          decideRecord(record, approve, reason ?? null);
          return { id, outcome: approve ? "applied" : "rejected" };
        });
        return json(200, { results });
      }
      const decide = /^\/v1\/approvals\/([^/]+)\/(approve|reject)$/.exec(path);
      if (decide && method === "POST") {
        const record = gateway.approvals.find((item) => item.id === decodeURIComponent(decide[1] ?? ""));
        if (!record) return json(404, { error: "not_found", message: "No such approval." });
        if (record.status !== "pending") {
          return json(409, { outcome: "already_decided", approval: record, message: "Already decided." });
        }
        decideRecord(record, decide[2] === "approve", (body as { reason?: string })?.reason ?? null);
        return json(200, { outcome: record.status, approval: record });
      }
      const show = /^\/v1\/approvals\/([^/]+)$/.exec(path);
      if (show) {
        const record = gateway.approvals.find((item) => item.id === decodeURIComponent(show[1] ?? ""));
        if (!record) return json(404, { error: "not_found", message: "No such approval." });
        return json(200, {
          ...record,
          requester_name: names[record.requester] ?? null,
          changes: gateway.changes[record.id] ?? defaultChanges(record),
        });
      }
      return json(404, { error: "not_found", message: `No route ${method} ${path}` });
    },
  };
  const decideRecord = (record: ApprovalRecord, approve: boolean, reason: string | null) => {
    gateway.decisions.push({ id: record.id, approve });
    record.status = approve ? "applied" : "rejected";
    record.decided_by = SESSION.name;
    record.decided_at = new Date().toISOString();
    record.reason = reason;
  };
  return gateway;
}

/** GET /v1/approvals filters as the gateway applies them (ApprovalListQuery), all combined with AND. */
function matchesQuery(
  record: ApprovalRecord,
  params: URLSearchParams,
  names: Record<string, string>,
): boolean {
  const status = params.get("status");
  const requester = params.get("requester");
  const q = params.get("q")?.toLowerCase();
  const before = params.get("before");
  const after = params.get("after");
  if (status && record.status !== status) return false;
  if (requester && record.requester !== requester && names[record.requester] !== requester) return false;
  if (params.get("scope") && record.scope !== params.get("scope")) return false;
  if (params.get("tool") && record.tool !== params.get("tool")) return false;
  if (q && !`${record.summary}\n${record.path}`.toLowerCase().includes(q)) return false;
  if (before && Date.parse(record.created_at) >= Date.parse(before)) return false;
  if (after && Date.parse(record.created_at) <= Date.parse(after)) return false;
  return true;
}

/** An enrolled client "laptop" (cli_1), not revoked, that last called at 11:58 on 2026-12-01. */
export function enrolledLaptop(): EnrolledClient {
  return {
    id: "cli_1",
    name: "laptop",
    scopes: ["context:read"],
    created_at: "2026-12-01T12:00:00.000Z",
    enrollment_id: "e1",
    revoked_at: null,
    last_used_at: "2026-12-01T11:58:00.000Z",
  };
}

/**
 * The whole console rendered at `url` against a new fake gateway installed as the global fetch; the test file's
 * afterEach undoes it with cleanup() and vi.unstubAllGlobals().
 */
export function renderConsole(
  url: string,
  options: FakeGatewayOptions = {},
): RenderResult & { gateway: FakeGateway } {
  const gateway = createFakeGateway(options);
  vi.stubGlobal("fetch", gateway.fetch);
  window.history.replaceState(null, "", url);
  return { ...render(createElement(ConsoleApp)), gateway };
}

/** happy-dom does no layout: give elements a viewport so the virtualised list renders its visible rows. */
export function fakeLayout(height = 600, width = 800): () => void {
  const proto = HTMLElement.prototype;
  const sizes: Record<string, number> = {
    clientHeight: height,
    clientWidth: width,
    offsetHeight: height,
    offsetWidth: width,
  };
  const saved = Object.keys(sizes).map(
    (name) => [name, Object.getOwnPropertyDescriptor(proto, name)] as const,
  );
  for (const [name, value] of Object.entries(sizes)) {
    Object.defineProperty(proto, name, { configurable: true, get: () => value });
  }
  return () => {
    for (const [name, descriptor] of saved) {
      if (descriptor) Object.defineProperty(proto, name, descriptor);
      else delete (proto as unknown as Record<string, unknown>)[name];
    }
  };
}
