// `server audit` and `server approvals list` run in process with fakes for their stores only (the deps record):
// the flags they are given reach the store typed, a refused flag reaches nothing, and the output is theirs.
import { describe, expect, it } from "vitest";
import type { AuditListOptions, AuditRecord } from "../../server/audit/store.js";
import { group, runInProcess } from "../invoke.test-kit.js";
import {
  type ApprovalCommandDeps,
  createServerApprovalsGroup,
  createServerAuditCommand,
  type OperatorGate,
} from "./server-approvals.js";

/** The stores' side of the boundary: what the commands asked of them. */
interface Calls {
  audit: AuditListOptions[];
  gate: unknown[];
}

function fakeDeps(calls: Calls, events: AuditRecord[] = []): ApprovalCommandDeps {
  const unused = () => Promise.reject(new Error("not used by this test"));
  const gate: OperatorGate = {
    expire: async () => [],
    list: async (query) => {
      calls.gate.push(query);
      return { approvals: [], next_cursor: "c2" };
    },
    detail: unused,
    decide: unused,
    decideMany: unused,
  };
  return {
    withGate: (_ctx, use) => use(gate),
    withAudit: (_ctx, use) =>
      use({
        list: async (options) => {
          calls.audit.push(options);
          return events;
        },
      }),
    credentialNames: async () => new Map(),
  };
}

function run(deps: ApprovalCommandDeps, argv: string[]) {
  return runInProcess(
    [group("server", [createServerApprovalsGroup(deps), createServerAuditCommand(deps)])],
    argv,
  );
}

describe("server audit through its deps", () => {
  it("asks the audit log with the flags typed: numbers, an ISO time, the kind", async () => {
    const calls: Calls = { audit: [], gate: [] };
    const started = Date.now();
    const argv = ["server", "audit", "--json", "--limit", "16", "--before", "42", "--since", "2h"];
    const { code, stdout } = await run(fakeDeps(calls), [...argv, "--kind", "tool_call"]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ events: [] });
    expect(calls.audit).toHaveLength(1);
    const [asked] = calls.audit;
    expect(asked).toMatchObject({ limit: 16, before: 42, kind: "tool_call" });
    const since = Date.parse(asked?.since ?? "");
    expect(since).toBeGreaterThanOrEqual(started - 2 * 3_600_000 - 1_000);
    expect(since).toBeLessThanOrEqual(Date.now() - 2 * 3_600_000);
  });

  it("asks with the declared defaults when no flag is given", async () => {
    const calls: Calls = { audit: [], gate: [] };
    expect((await run(fakeDeps(calls), ["server", "audit"])).code).toBe(0);
    expect(calls.audit[0]).toMatchObject({ limit: 1000 });
    expect(calls.audit[0]).not.toHaveProperty("before");
  });

  it("refuses --limit 0x10 (once read as 16) before the audit log is opened", async () => {
    const calls: Calls = { audit: [], gate: [] };
    await expect(run(fakeDeps(calls), ["server", "audit", "--limit", "0x10"])).rejects.toThrow(
      'invalid --limit "0x10": expected an integer of at least 1',
    );
    expect(calls.audit).toEqual([]);
  });
});

describe("server approvals list through its deps", () => {
  it("gives the gate the typed page query, and names the next page with the same flags", async () => {
    const calls: Calls = { audit: [], gate: [] };
    const started = Date.now();
    const { code, stdout, stderr } = await run(fakeDeps(calls), [
      ...["server", "approvals", "list", "--limit", "7", "--status", "all", "--older-than", "90m"],
      ...["--tool", "memory_write"],
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain("no approval requests");
    expect(calls.gate).toHaveLength(1);
    const query = calls.gate[0] as { limit: number; status: unknown; before: string; tool: string };
    expect(query).toMatchObject({ limit: 7, status: undefined, tool: "memory_write" });
    expect(Date.parse(query.before)).toBeLessThanOrEqual(Date.now() - 90 * 60_000);
    expect(Date.parse(query.before)).toBeGreaterThanOrEqual(started - 90 * 60_000 - 1_000);
    expect(stderr.trim()).toBe(
      "more requests: ivoai server approvals list --status all --limit 7 --tool memory_write --older-than 90m --cursor c2",
    );
  });

  it("refuses --limit past the page size and an unknown --status before the gate is asked", async () => {
    const calls: Calls = { audit: [], gate: [] };
    for (const bad of [
      ["--limit", "501"],
      ["--limit", "1e1"],
      ["--status", "maybe"],
    ]) {
      await expect(run(fakeDeps(calls), ["server", "approvals", "list", ...bad])).rejects.toMatchObject({
        code: "USAGE",
      });
    }
    expect(calls.gate).toEqual([]);
  });
});
