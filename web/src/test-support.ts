// A fake of the gateway's console API for component tests: the real routes and JSON shapes, state in memory,
// every request recorded. Installed as the global fetch (the app's only boundary).
import { CONSOLE_ROLE_SCOPES } from "../../src/protocol/scopes.js";
import type { ApprovalRecord, ApprovalSummary, ConsoleSession } from "./types.js";

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

function summaryOf(record: ApprovalRecord): ApprovalSummary {
  const { diff, payload, base_version: _base, reason: _reason, ...rest } = record;
  return {
    ...rest,
    diff_bytes: diff.length,
    payload_bytes: JSON.stringify(payload).length,
    requester_name: null,
  };
}

export interface FakeGateway {
  requests: RecordedRequest[];
  approvals: ApprovalRecord[];
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
  signedIn?: boolean;
  /** The session's role and scopes (default: an approver). */
  session?: Partial<ConsoleSession>;
  /** More routes by "METHOD /path" (no query): a JSON body to answer 200 with, or a function of the request. */
  routes?: Record<string, unknown>;
}

export function createFakeGateway(options: FakeGatewayOptions = {}): FakeGateway {
  const session = { ...SESSION, ...options.session };
  let expiredWith: string | null = null;
  const gateway: FakeGateway = {
    requests: [],
    approvals: options.approvals ?? [],
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
      if (path === "/v1/approvals") {
        const status = url.searchParams.get("status");
        const limit = Math.min(200, Number(url.searchParams.get("limit") ?? 50));
        const start = Number(url.searchParams.get("cursor") ?? 0);
        const matching = gateway.approvals.filter((record) => !status || record.status === status);
        const page = matching.slice(start, start + limit).map(summaryOf);
        const next = start + limit < matching.length ? String(start + limit) : null;
        return json(200, { approvals: page, next_cursor: next });
      }
      const decide = /^\/v1\/approvals\/([^/]+)\/(approve|reject)$/.exec(path);
      if (decide && method === "POST") {
        const record = gateway.approvals.find((item) => item.id === decodeURIComponent(decide[1] ?? ""));
        if (!record) return json(404, { error: "not_found", message: "No such approval." });
        if (record.status !== "pending") {
          return json(409, { outcome: "already_decided", approval: record, message: "Already decided." });
        }
        const reason = (body as { reason?: string })?.reason ?? null;
        record.status = decide[2] === "approve" ? "applied" : "rejected";
        record.decided_by = SESSION.name;
        record.decided_at = new Date().toISOString();
        record.reason = reason;
        return json(200, { outcome: record.status, approval: record });
      }
      const show = /^\/v1\/approvals\/([^/]+)$/.exec(path);
      if (show) {
        const record = gateway.approvals.find((item) => item.id === decodeURIComponent(show[1] ?? ""));
        return record ? json(200, record) : json(404, { error: "not_found", message: "No such approval." });
      }
      return json(404, { error: "not_found", message: `No route ${method} ${path}` });
    },
  };
  return gateway;
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
