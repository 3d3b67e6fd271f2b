// The audit log's contract, run on SQLite and on PostgreSQL: batching and what a crash can lose, durability at
// close, pagination in one order across writers, the activity view, and the schema version check.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { cpuMsOf } from "../../../test/cpu-time.js";
import { describeBackends } from "../store/backends.test-kit.js";
import { ACTIVITY_CHUNK, ACTIVITY_CHUNK_SQL, bucketCount } from "./activity.js";
import { toolCall } from "./events.test-kit.js";
import {
  AUDIT_MAX_DELAY_MS,
  AUDIT_MAX_PENDING,
  type AuditEvent,
  type AuditLog,
  type AuditLogOptions,
  lastUsedArm,
  listStatement,
  openAuditLog,
} from "./store.js";

/** A tool call: the frequent event, which waits to share a write. */
const call = toolCall;

const decision = (index: number): AuditEvent => ({
  kind: "approval_decision",
  actor: "ana",
  detail: { index },
});

describeBackends("audit log", (kit) => {
  let schemas = 0;
  let schema: string;
  let audit: AuditLog;
  let clock: Date;
  const opened: AuditLog[] = [];
  const errors: { message: string; lost: number }[] = [];

  const open = async (options: AuditLogOptions = {}) => {
    const log = await openAuditLog(await kit.open(schema), {
      onWriteError: (error, lost) => errors.push({ message: error.message, lost }),
      now: () => clock,
      ...options,
    });
    opened.push(log);
    return log;
  };
  /** Rows another connection (another replica, or `ivoai server audit`) sees. */
  const seen = async () => {
    const reader = await kit.open(schema);
    try {
      return (await reader.get<{ n: number }>("SELECT COUNT(*) AS n FROM events"))?.n;
    } finally {
      await reader.close();
    }
  };
  /** Records at `iso` (the log takes the time when an event is recorded). */
  const at = (iso: string, event: AuditEvent) => {
    clock = new Date(iso);
    void audit.record(event);
  };

  beforeEach(async () => {
    schemas += 1;
    schema = `audit_t${schemas}`;
    errors.length = 0;
    clock = new Date("2026-01-01T00:00:00Z");
    audit = await open();
  });
  afterEach(async () => {
    vi.useRealTimers();
    for (const log of opened.splice(0)) await log.close();
  });

  it(`writes events together at most ${AUDIT_MAX_DELAY_MS} ms after the first (what a crash can lose)`, async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const first = audit.record(call({ session_id: "s0" }));
    vi.advanceTimersByTime(AUDIT_MAX_DELAY_MS - 5);
    for (let index = 1; index < 3; index++) void audit.record(call({ session_id: `s${index}` }));
    vi.advanceTimersByTime(4);
    expect(await seen()).toBe(0);
    vi.advanceTimersByTime(1);
    await first;
    expect(await seen()).toBe(3);
    // The next event starts a new window.
    const next = audit.record(call({ session_id: "s3" }));
    vi.advanceTimersByTime(AUDIT_MAX_DELAY_MS - 1);
    expect(await seen()).toBe(3);
    vi.advanceTimersByTime(1);
    await next;
    expect(await seen()).toBe(4);
    expect(errors).toEqual([]);
  });

  it("writes what is pending before it lists, and on close", async () => {
    void audit.record(call());
    expect((await audit.list({})).map((event) => event.kind)).toEqual(["tool_call"]);
    void audit.record(call());
    await audit.close();
    expect(await seen()).toBe(2);
  });

  it(`writes a burst of ${AUDIT_MAX_PENDING} at once, without waiting`, async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    for (let index = 0; index < AUDIT_MAX_PENDING - 1; index++) void audit.record(call());
    expect(await seen()).toBe(0);
    const burst = audit.record(call());
    for (let index = 0; index < 44; index++) void audit.record(call());
    await burst;
    expect(await seen()).toBe(AUDIT_MAX_PENDING);
  });

  it("writes a security decision at once, with the calls pending before it", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    void audit.record(call());
    void audit.record(call());
    expect(await seen()).toBe(0);
    await audit.record(decision(3));
    expect(await seen()).toBe(3);
  });

  it("reports a failed write with what it lost instead of throwing", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    void audit.record(call());
    void audit.record(call());
    const other = await kit.open(schema);
    await other.exec("DROP TABLE events");
    await other.close();
    await audit.flush();
    expect(errors).toHaveLength(1);
    expect(errors[0]?.lost).toBe(2);
  });

  it("has every batched record durable after close(), ids in record order", async () => {
    for (let index = 0; index < 1_000; index++) void audit.record(call({ session_id: `s${index}` }));
    void audit.record(decision(1_000));
    for (let index = 1_001; index < 1_500; index++) void audit.record(call({ session_id: `s${index}` }));
    await audit.close();
    const reader = await open();
    const events = await reader.list({ limit: 5_000 });
    expect(events).toHaveLength(1_500);
    expect(events.map((event) => (event.kind === "tool_call" ? event.session_id : "decision"))).toEqual(
      Array.from({ length: 1_500 }, (_, index) => (index === 1_000 ? "decision" : `s${index}`)),
    );
    events.forEach((event, index) => {
      if (index > 0) expect(event.id).toBeGreaterThan(events[index - 1]?.id ?? Number.POSITIVE_INFINITY);
    });
  });

  it("filters by time and kind, keeps the newest of a limit and pages back by id", async () => {
    at("2026-01-01T10:00:00.000Z", call({ session_id: "a" }));
    at("2026-01-01T11:00:00.000Z", decision(1));
    at("2026-01-01T12:00:00.000Z", call({ session_id: "b" }));
    at("2026-01-01T13:00:00.000Z", call({ session_id: "c" }));
    const all = await audit.list({});
    expect(all.map((event) => event.at)).toEqual([
      "2026-01-01T10:00:00.000Z",
      "2026-01-01T11:00:00.000Z",
      "2026-01-01T12:00:00.000Z",
      "2026-01-01T13:00:00.000Z",
    ]);
    expect(all[1]).toMatchObject({ kind: "approval_decision", actor: "ana", detail: { index: 1 } });
    expect(all[0]).toMatchObject(call({ session_id: "a" }));
    const sessions = (events: AuditEvent[]) =>
      events.map((event) => (event.kind === "tool_call" ? event.session_id : event.kind));
    expect(sessions(await audit.list({ since: "2026-01-01T11:30:00.000Z" }))).toEqual(["b", "c"]);
    expect(sessions(await audit.list({ kind: "tool_call" }))).toEqual(["a", "b", "c"]);
    expect(sessions(await audit.list({ kind: "approval_decision" }))).toEqual(["approval_decision"]);
    const newest = await audit.list({ limit: 2 });
    expect(sessions(newest)).toEqual(["b", "c"]);
    const before = await audit.list({ limit: 2, before: newest[0]?.id ?? 0 });
    expect(sessions(before)).toEqual(["a", "approval_decision"]);
    expect(await audit.list({ limit: 2, before: before[0]?.id ?? 0 })).toEqual([]);
    expect(sessions(await audit.list({ kind: "tool_call", limit: 1, before: newest[1]?.id ?? 0 }))).toEqual([
      "b",
    ]);
  });

  it("loses nothing when two connections write at once, and pages through in one order", async () => {
    const other = await open();
    const writes: Promise<void>[] = [];
    for (let index = 0; index < 600; index++) {
      writes.push(audit.record(call({ session_id: `a${index}` })));
      writes.push(other.record(call({ session_id: `b${index}` })));
      // Decisions commit at once, in the middle of the other writer's batches.
      if (index % 150 === 0) writes.push(other.record(decision(index)));
    }
    await Promise.all(writes);
    const pages: number[][] = [];
    const seenIds: number[] = [];
    const order = { a: [] as string[], b: [] as string[] };
    let before: number | undefined;
    for (;;) {
      const page = await (pages.length % 2 === 0 ? audit : other).list({
        limit: 97,
        ...(before !== undefined ? { before } : {}),
      });
      if (page.length === 0) break;
      pages.push(page.map((event) => event.id));
      for (const event of [...page].reverse()) {
        seenIds.push(event.id);
        if (event.kind === "tool_call" && event.session_id)
          order[event.session_id[0] as "a" | "b"].unshift(event.session_id);
      }
      before = page[0]?.id;
    }
    expect(seenIds).toHaveLength(1_200 + 4);
    expect(new Set(seenIds).size).toBe(seenIds.length);
    // Newest first across pages: strictly decreasing ids, so no event is read twice or skipped.
    seenIds.forEach((id, index) => {
      if (index > 0) expect(id).toBeLessThan(seenIds[index - 1] ?? 0);
    });
    expect(order.a).toEqual(Array.from({ length: 600 }, (_, index) => `a${index}`));
    expect(order.b).toEqual(Array.from({ length: 600 }, (_, index) => `b${index}`));
    // Both connections answer the same pages.
    expect((await other.list({ limit: 5_000 })).map((event) => event.id)).toEqual(
      (await audit.list({ limit: 5_000 })).map((event) => event.id),
    );
  });

  it("writes a batch holding an agent's NUL byte, keeping the text exactly in the event", async () => {
    at("2026-01-01T10:00:00.000Z", call({ tool: "made\u0000up", session_id: "nul\u0000session" }));
    at("2026-01-01T10:00:01.000Z", call());
    const events = await audit.list({});
    expect(errors).toEqual([]);
    expect(events.map((event) => (event.kind === "tool_call" ? [event.tool, event.session_id] : []))).toEqual(
      [
        ["made\u0000up", "nul\u0000session"],
        ["context_search", "s1"],
      ],
    );
    const activity = await audit.activity({
      since: new Date("2026-01-01T10:00:00Z"),
      until: new Date("2026-01-01T11:00:00Z"),
      bucket: "hour",
    });
    expect(activity.by_tool.map((entry) => entry.key).sort()).toEqual(["context_search", "made\uFFFDup"]);
  });

  it("refuses a database that a newer ivoai migrated", async () => {
    const db = await kit.open(schema);
    await db.run(
      "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ('audit', 99, 'future', $1)",
      [new Date().toISOString()],
    );
    await db.close();
    await expect(openAuditLog(await kit.open(schema))).rejects.toMatchObject({
      code: "STORE_VERSION",
      message: expect.stringMatching(/schema version 99.*upgrade ivoai/),
    });
  });

  it("keeps the busiest sessions exact among 10,000 one-call sessions, in bounded groups", async () => {
    const busy = ["busy-a", "busy-b", "busy-c"];
    const base = Date.parse("2026-01-01T10:00:00Z");
    for (let index = 0; index < 10_000; index += 1) {
      clock = new Date(base + index);
      void audit.record(call({ session_id: `one-${index}` }));
      // The busy sessions call every 10th, 20th and 40th row, from the first row on.
      busy.forEach((session, rank) => {
        if (index % (10 * 2 ** rank) === 0) void audit.record(call({ session_id: session }));
      });
    }
    const activity = await audit.activity({
      since: new Date(base),
      until: new Date(base + 3_600_000),
      bucket: "hour",
    });
    expect(activity.by_session.slice(0, 3).map((entry) => [entry.key, entry.calls])).toEqual([
      ["busy-a", 1_000],
      ["busy-b", 500],
      ["busy-c", 250],
    ]);
    expect(activity.by_session).toHaveLength(50);
    expect(activity.totals.calls).toBe(10_000 + 1_000 + 500 + 250);
  });

  it("counts calls, errors, latency and tokens per bucket, empty buckets included", async () => {
    at("2026-01-01T10:05:00.000Z", call({ latency_ms: 10, tokens_consumed: 1 }));
    at("2026-01-01T10:59:59.999Z", call({ latency_ms: 30, tokens_consumed: 2, status: "FAILED" }));
    at("2026-01-01T10:30:00.000Z", call({ latency_ms: 20, tokens_consumed: 3, tool: "memory_query" }));
    at("2026-01-01T12:00:00.000Z", call({ latency_ms: 0, status: "REJECTED", credential_id: "cli_b" }));
    at("2026-01-01T12:10:00.000Z", call({ status: "PENDING_HUMAN_APPROVAL", session_id: null }));
    // Outside the window on both sides, and a decision (not a tool call) inside it.
    at("2026-01-01T09:59:59.999Z", call());
    at("2026-01-01T13:00:00.000Z", call());
    at("2026-01-01T11:00:00.000Z", { kind: "approval_decision", actor: "ann", detail: {} });

    const activity = await audit.activity({
      since: new Date("2026-01-01T10:00:00Z"),
      until: new Date("2026-01-01T13:00:00Z"),
      bucket: "hour",
    });
    expect(activity.totals).toEqual({ calls: 5, errors: 2, p50_ms: 10, p95_ms: 30, tokens: 16 });
    expect(activity.series.map((entry) => [entry.start, entry.calls, entry.errors])).toEqual([
      ["2026-01-01T10:00:00.000Z", 3, 1],
      ["2026-01-01T11:00:00.000Z", 0, 0],
      ["2026-01-01T12:00:00.000Z", 2, 1],
    ]);
    expect(activity.series[0]).toMatchObject({ p50_ms: 20, p95_ms: 30, tokens: 6 });
    expect(activity.series[1]).toMatchObject({ p50_ms: 0, p95_ms: 0, tokens: 0 });
    expect(activity.by_tool.map((entry) => [entry.key, entry.calls])).toEqual([
      ["context_search", 4],
      ["memory_query", 1],
    ]);
    expect(activity.by_credential.map((entry) => [entry.key, entry.calls, entry.errors])).toEqual([
      ["cli_a", 4, 1],
      ["cli_b", 1, 1],
    ]);
    // Calls without a session count everywhere else, not under a session.
    expect(activity.by_session.map((entry) => [entry.key, entry.calls])).toEqual([["s1", 4]]);
  });

  it("keeps fractional latencies and large token counts as recorded", async () => {
    at("2026-01-01T10:00:00.000Z", call({ latency_ms: 42.3, tokens_consumed: 1_000_000_000 }));
    at("2026-01-01T10:00:01.000Z", call({ latency_ms: 42.3, tokens_consumed: 2 }));
    const activity = await audit.activity({
      since: new Date("2026-01-01T10:00:00Z"),
      until: new Date("2026-01-01T11:00:00Z"),
      bucket: "hour",
    });
    expect(activity.totals).toEqual({
      calls: 2,
      errors: 0,
      p50_ms: 42.3,
      p95_ms: 42.3,
      tokens: 1_000_000_002,
    });
  });

  it("aligns buckets to the clock and counts them up front", async () => {
    const query = {
      since: new Date("2026-01-01T10:30:10Z"),
      until: new Date("2026-01-01T10:33:00Z"),
      bucket: "minute" as const,
    };
    expect(bucketCount(query)).toBe(3);
    at("2026-01-01T10:30:20.000Z", call());
    const activity = await audit.activity(query);
    expect(activity.series.map((entry) => entry.start)).toEqual([
      "2026-01-01T10:30:00.000Z",
      "2026-01-01T10:31:00.000Z",
      "2026-01-01T10:32:00.000Z",
    ]);
    expect(activity.series.map((entry) => entry.calls)).toEqual([1, 0, 0]);
    expect(bucketCount({ ...query, until: new Date("2026-03-01T00:00:00Z") })).toBeGreaterThan(1_500);
    expect(bucketCount({ since: query.since, until: new Date("2026-01-02T10:00:00Z"), bucket: "day" })).toBe(
      2,
    );
  });

  it("keeps the top 50 of each breakdown, largest first", async () => {
    for (let index = 0; index < 60; index += 1) {
      for (let repeat = 0; repeat <= index % 3; repeat += 1)
        at("2026-01-01T10:00:00.000Z", call({ session_id: `s${index}` }));
    }
    const activity = await audit.activity({
      since: new Date("2026-01-01T10:00:00Z"),
      until: new Date("2026-01-01T11:00:00Z"),
      bucket: "hour",
    });
    expect(activity.by_session).toHaveLength(50);
    expect(activity.by_session[0]?.calls).toBe(3);
    expect(activity.by_session.map((entry) => entry.calls)).toEqual([
      ...Array(20).fill(3),
      ...Array(20).fill(2),
      ...Array(10).fill(1),
    ]);
    expect(activity.totals.calls).toBe(20 * 1 + 20 * 2 + 20 * 3);
  });

  it("reads calls recorded at the same instant across chunk boundaries exactly once", async () => {
    for (let index = 0; index < ACTIVITY_CHUNK * 2 + 7; index += 1)
      at("2026-01-01T10:00:00.000Z", call({ latency_ms: index % 100 }));
    const activity = await audit.activity({
      since: new Date("2026-01-01T10:00:00Z"),
      until: new Date("2026-01-01T11:00:00Z"),
      bucket: "hour",
    });
    expect(activity.totals.calls).toBe(ACTIVITY_CHUNK * 2 + 7);
  });

  it("aggregates 100,000 calls in the window in bounded CPU time, each chunk an index range from the last row", async () => {
    const base = Date.parse("2026-01-01T00:00:00Z");
    const tools = ["context_search", "memory_query", "memory_write_page", "context_get_document"];
    for (let index = 0; index < 100_000; index += 1) {
      clock = new Date(base + index * 800);
      void audit.record(
        call({
          tool: tools[index % 4] as string,
          credential_id: `cli_${index % 20}`,
          session_id: `s${index % 500}`,
          latency_ms: index % 1000,
          status: index % 10 === 0 ? "FAILED" : "SUCCESS",
        }),
      );
    }
    await audit.flush();
    // Other work runs while it aggregates: it yields between chunks.
    let ticks = 0;
    let done = false;
    const tick = () => {
      ticks += 1;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const window = { since: new Date(base), until: new Date(base + 86_400_000) };
    const { ms, value: activity } = await cpuMsOf(() => audit.activity({ ...window, bucket: "minute" }));
    done = true;
    expect(ticks).toBeGreaterThanOrEqual(100_000 / ACTIVITY_CHUNK - 1);
    console.info(
      `activity over 100,000 calls, 1,440 minute buckets [${kit.dialect}]: ${ms.toFixed(0)} ms CPU`,
    );
    expect(activity.totals.calls).toBe(100_000);
    expect(activity.totals.errors).toBe(10_000);
    // 499 ms lies in a 1 %-wide bin reported by its middle.
    expect(Math.abs(activity.totals.p50_ms - 499) / 499).toBeLessThan(0.01);
    expect(activity.series).toHaveLength(1_440);
    // This process's CPU, not the wall clock of a busy host: measured 300 ms on SQLite (queries included) and
    // 800 ms on PostgreSQL (rows decoded here); a quadratic pass over 100,000 calls takes far more.
    expect(ms).toBeLessThan(3_000);
    // The database's share, in rows: a chunk in the middle of the window reads its own rows from the index.
    const middle = new Date(base + 50_000 * 800).toISOString();
    const plan = await chunkPlan(middle, window.until.toISOString());
    expect(plan, plan.details).toMatchObject({
      sorted: false,
      rows: ACTIVITY_CHUNK,
    });
  }, 300_000);

  it("filters a listing by a tool call's columns, a time range and text, LIKE's characters taken literally", async () => {
    at("2026-01-01T00:00:01Z", call({ tool: "memory_read_page", credential_id: "cli_b", status: "FAILED" }));
    at("2026-01-01T00:00:02Z", call({ tool: "context_search", session_id: "s9" }));
    at("2026-01-01T00:00:03Z", { kind: "client_revoked", actor: "Eva", detail: { id: "CLI_100%" } });
    const ids = async (options: Parameters<AuditLog["list"]>[0]) =>
      (await audit.list(options)).map((e) => e.at);
    expect(await ids({ credential_id: "cli_b" })).toEqual(["2026-01-01T00:00:01.000Z"]);
    expect(await ids({ status: "FAILED" })).toEqual(["2026-01-01T00:00:01.000Z"]);
    expect(await ids({ tool: "context_search", session_id: "s9" })).toEqual(["2026-01-01T00:00:02.000Z"]);
    expect(await ids({ since: "2026-01-01T00:00:02.000Z", until: "2026-01-01T00:00:03.000Z" })).toEqual([
      "2026-01-01T00:00:02.000Z",
    ]);
    expect(await ids({ text: "cli_100%" })).toEqual(["2026-01-01T00:00:03.000Z"]);
    expect(await ids({ text: "_100" })).toEqual(["2026-01-01T00:00:03.000Z"]);
    expect(await ids({ text: "1_0" })).toEqual([]);
    expect(await ids({ text: "%" })).toEqual(["2026-01-01T00:00:03.000Z"]);
  });

  it("finds non-ASCII text: exact case on both backends, any case on PostgreSQL", async () => {
    at("2026-01-01T00:00:01Z", {
      kind: "approval_decision",
      actor: "Jörg",
      detail: { reason: "Ärger mit Öl" },
    });
    at("2026-01-01T00:00:02Z", call({ tool: "context_search" }));
    const ids = async (text: string) => (await audit.list({ text })).map((e) => e.at);
    const decided = ["2026-01-01T00:00:01.000Z"];
    expect(await ids("Ärger")).toEqual(decided);
    expect(await ids("Jörg")).toEqual(decided);
    // ASCII letters ignore case everywhere; SQLite's LIKE folds ASCII only.
    expect(await ids("MIT")).toEqual(decided);
    expect(await ids("ärger")).toEqual(kit.dialect === "postgres" ? decided : []);
  });

  it("tells each credential's last call among 100,000 with an index probe, and pages its calls along the index", async () => {
    const base = Date.parse("2026-01-01T00:00:00Z");
    for (let index = 0; index < 100_000; index += 1) {
      clock = new Date(base + index * 800);
      void audit.record(call({ credential_id: `cli_${index % 20}` }));
      if (index % 500 === 250) void audit.record(call({ credential_id: "cli_rare" }));
    }
    await audit.flush();
    const ids = [...Array.from({ length: 20 }, (_, index) => `cli_${index}`), "cli_never"];
    const { ms, value: used } = await cpuMsOf(() => audit.lastUsed(ids));
    console.info(`last used of 21 credentials over 100,000 calls [${kit.dialect}]: ${ms.toFixed(0)} ms CPU`);
    expect(used.get("cli_19")).toBe(new Date(base + 99_999 * 800).toISOString());
    expect(used.get("cli_0")).toBe(new Date(base + 99_980 * 800).toISOString());
    expect(used.get("cli_never")).toBeNull();
    expect(used.size).toBe(21);
    // The database reads one index entry per credential (and that event by id), not its 5,000 calls.
    const probe = await statementPlan(lastUsedArm(1), ["cli_3"]);
    if (kit.dialect === "sqlite")
      expect(probe.details).toMatch(
        /SEARCH events USING COVERING INDEX events_credential \(credential_id=\?\)/,
      );
    else expect(probe.rows, probe.details).toBeLessThanOrEqual(2);
    expect(probe.sorted, probe.details).toBe(false);

    // A page of one credential's calls in the middle of them (an export reads page after page): an index range
    // in id order, not every call of the credential sorted for each page.
    const pagePlan = async (credential_id: string, limit: number) => {
      const newest = await audit.list({ credential_id, limit: limit * 2 });
      const page = listStatement({ credential_id, limit, before: newest[0]?.id ?? 0 }, kit.dialect);
      return statementPlan(page.sql, page.params);
    };
    for (const [credential, limit] of [
      ["cli_3", 1_000],
      ["cli_rare", 50],
    ] as const) {
      const plan = await pagePlan(credential, limit);
      expect(plan.sorted, plan.details).toBe(false);
      if (kit.dialect === "sqlite")
        expect(plan.details).toMatch(
          /^SEARCH events USING INDEX events_credential \(credential_id=\? AND id<\?\)$/,
        );
      else expect(plan.details).not.toMatch(/Seq Scan|Bitmap/);
    }
    // PostgreSQL walks the primary key back for a credential making one call in 20 (its cost model: 20 rows
    // read per row kept), and this index for a rarer one, reading the page's rows only.
    if (kit.dialect === "postgres") {
      const rare = await pagePlan("cli_rare", 50);
      expect(rare.details).toContain('"Index Name":"events_credential"');
      expect(rare.rows, rare.details).toBeLessThanOrEqual(50);
    }
  }, 300_000);

  /** How a statement is read: with a sort or not, the rows its scans read (PostgreSQL), and the plan's text. */
  const statementPlan = async (sql: string, params: unknown[]) => {
    const reader = await kit.open(schema);
    try {
      if (kit.dialect === "sqlite") {
        const steps = await reader.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
        const details = steps.map((step) => step.detail).join("; ");
        return { sorted: /TEMP B-TREE/.test(details), rows: Number.NaN, details };
      }
      // With the statistics and visibility map autovacuum keeps.
      await reader.run("VACUUM ANALYZE events", []);
      const [row] = await reader.all<{ "QUERY PLAN": [{ Plan: PgPlan }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        params,
      );
      const nodes = flatten(row?.["QUERY PLAN"][0].Plan);
      const scans = nodes.filter((node) => node["Node Type"].includes("Scan"));
      return {
        sorted: nodes.some((node) => node["Node Type"].includes("Sort")),
        rows: scans.reduce(
          (sum, node) => sum + node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0),
          0,
        ),
        details: JSON.stringify(row?.["QUERY PLAN"][0].Plan),
      };
    } finally {
      await reader.close();
    }
  };

  /** How a chunk after row (`after`, id 0) is read: with a sort, and how many rows its scan reads. */
  const chunkPlan = async (after: string, until: string) => {
    const reader = await kit.open(schema);
    const params = [after, until, 0, ACTIVITY_CHUNK];
    try {
      if (kit.dialect === "sqlite") {
        const steps = await reader.all<{ detail: string }>(
          `EXPLAIN QUERY PLAN ${ACTIVITY_CHUNK_SQL}`,
          params,
        );
        const details = steps.map((step) => step.detail).join("; ");
        // SQLite stops an index range scan in (at, id) order after LIMIT rows; a full scan or a sort would not.
        const ranged = /SEARCH events USING (COVERING )?INDEX events_at \(at>\? AND at<\?\)/.test(details);
        return { sorted: /TEMP B-TREE/.test(details), rows: ranged ? ACTIVITY_CHUNK : Number.NaN, details };
      }
      // With the statistics autovacuum keeps: a table never analysed is planned as a bitmap scan of the rest
      // of the window and a sort (50,000 rows read here for 5,000).
      await reader.run("ANALYZE events", []);
      const [row] = await reader.all<{ "QUERY PLAN": [{ Plan: PgPlan }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${ACTIVITY_CHUNK_SQL}`,
        params,
      );
      const nodes = flatten(row?.["QUERY PLAN"][0].Plan);
      const scans = nodes.filter((node) => node["Node Type"].includes("Scan"));
      return {
        sorted: nodes.some((node) => node["Node Type"] === "Sort"),
        rows: scans.reduce(
          (sum, node) => sum + node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0),
          0,
        ),
        details: JSON.stringify(row?.["QUERY PLAN"][0].Plan),
      };
    } finally {
      await reader.close();
    }
  };
});

interface PgPlan {
  "Node Type": string;
  "Actual Rows": number;
  "Rows Removed by Filter"?: number;
  Plans?: PgPlan[];
}
const flatten = (plan: PgPlan | undefined): PgPlan[] =>
  plan ? [plan, ...(plan.Plans ?? []).flatMap(flatten)] : [];
