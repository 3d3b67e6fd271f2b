import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import { type AuditEvent, type AuditLog, openAuditLog } from "./store.js";

const decision = (index: number): AuditEvent => ({
  kind: "approval_decision",
  actor: "ana",
  detail: { index },
});
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

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
    audit.close();
    await cleanup();
  });

  it("writes one turn's events together right after that turn", async () => {
    for (let index = 0; index < 3; index++) audit.record(decision(index));
    expect(seen()).toBe(0);
    await nextTurn();
    expect(seen()).toBe(3);
    expect(errors).toEqual([]);
  });

  it("writes what is pending before it lists, and on close", () => {
    audit.record(decision(1));
    expect(audit.list({}).map((event) => event.kind)).toEqual(["approval_decision"]);
    audit.record(decision(2));
    audit.close();
    expect(seen()).toBe(2);
    audit = openAuditLog(file);
  });

  it("writes a burst of 256 at once, without waiting for the turn to end", () => {
    for (let index = 0; index < 300; index++) audit.record(decision(index));
    expect(seen()).toBe(256);
  });

  it("reports a failed write with what it lost instead of throwing from the event loop", async () => {
    audit.record(decision(1));
    audit.record(decision(2));
    const other = openSqlite(file);
    other.exec("DROP TABLE events");
    other.close();
    await nextTurn();
    expect(errors).toHaveLength(1);
    expect(errors[0]?.lost).toBe(2);
  });
});
