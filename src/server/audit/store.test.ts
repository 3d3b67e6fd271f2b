import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import {
  AUDIT_MAX_DELAY_MS,
  AUDIT_MAX_PENDING,
  type AuditEvent,
  type AuditLog,
  openAuditLog,
} from "./store.js";

/** A tool call: the frequent event, which waits to share a write. */
const call = (index: number): AuditEvent => ({
  kind: "tool_call",
  tool: "context_search",
  endpoint: "ivoai-context",
  credential_id: "cli_a",
  session_id: `s${index}`,
  tier: "read",
  status: "SUCCESS",
  latency_ms: 1,
  tokens_consumed: 1,
  guardrail_checked: true,
});

const decision = (index: number): AuditEvent => ({
  kind: "approval_decision",
  actor: "ana",
  detail: { index },
});

describe("audit log writes", () => {
  let file: string;
  let cleanup: () => Promise<void>;
  let audit: AuditLog;
  const errors: { message: string; lost: number }[] = [];
  /** Rows another connection (another process, say `ivoai server audit`) sees. */
  const seen = () => {
    const reader = openSqlite(file, { readonly: true });
    try {
      return (reader.prepare("SELECT count(*) AS n FROM events").get() as { n: number }).n;
    } finally {
      reader.close();
    }
  };

  beforeEach(async () => {
    const temp = await tempDir();
    cleanup = temp.cleanup;
    file = `${temp.dir}/audit.sqlite`;
    errors.length = 0;
    audit = openAuditLog(file, undefined, (error, lost) => errors.push({ message: error.message, lost }));
  });
  afterEach(async () => {
    vi.useRealTimers();
    audit.close();
    await cleanup();
  });

  it(`writes events together at most ${AUDIT_MAX_DELAY_MS} ms after the first (what a crash can lose)`, () => {
    vi.useFakeTimers();
    audit.record(call(0));
    vi.advanceTimersByTime(AUDIT_MAX_DELAY_MS - 5);
    for (let index = 1; index < 3; index++) audit.record(call(index));
    vi.advanceTimersByTime(4);
    expect(seen()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(seen()).toBe(3);
    // The next event starts a new window.
    audit.record(call(3));
    vi.advanceTimersByTime(AUDIT_MAX_DELAY_MS - 1);
    expect(seen()).toBe(3);
    vi.advanceTimersByTime(1);
    expect(seen()).toBe(4);
    expect(errors).toEqual([]);
  });

  it("writes what is pending before it lists, and on close", () => {
    audit.record(call(1));
    expect(audit.list({}).map((event) => event.kind)).toEqual(["tool_call"]);
    audit.record(call(2));
    audit.close();
    expect(seen()).toBe(2);
    audit = openAuditLog(file);
  });

  it(`writes a burst of ${AUDIT_MAX_PENDING} at once, without waiting`, () => {
    for (let index = 0; index < AUDIT_MAX_PENDING - 1; index++) audit.record(call(index));
    expect(seen()).toBe(0);
    for (let index = 0; index < 45; index++) audit.record(call(index));
    expect(seen()).toBe(AUDIT_MAX_PENDING);
  });

  it("writes a security decision at once, with the calls pending before it", () => {
    vi.useFakeTimers();
    audit.record(call(1));
    audit.record(call(2));
    expect(seen()).toBe(0);
    audit.record(decision(3));
    expect(seen()).toBe(3);
  });

  it("reports a failed write with what it lost instead of throwing", () => {
    audit.record(call(1));
    audit.record(call(2));
    const other = openSqlite(file);
    other.exec("DROP TABLE events");
    other.close();
    audit.flush();
    expect(errors).toHaveLength(1);
    expect(errors[0]?.lost).toBe(2);
  });
});
