import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QuotaSnapshot } from "../contracts.js";
import { MAX_QUOTA_SNAPSHOTS, mergeSnapshots, openQuotaStore } from "./store.js";

const snap = (fields: Partial<QuotaSnapshot>): QuotaSnapshot => ({
  executor: "codex",
  window: "primary",
  used_percent: 10,
  status: null,
  resets_at: "2026-11-30T08:00:00.000Z",
  observed_at: "2026-11-30T03:00:00.000Z",
  source: "app-server",
  ...fields,
});

describe("mergeSnapshots", () => {
  it("lets the newer observation win, whatever the order they arrive in", () => {
    const older = snap({ used_percent: 10 });
    const newer = snap({ used_percent: 55, observed_at: "2026-11-30T03:05:00.000Z" });
    expect(mergeSnapshots([newer], [older])[0]?.used_percent).toBe(55);
    expect(mergeSnapshots([older], [newer])[0]?.used_percent).toBe(55);
  });

  it("merges a partial update field by field: null keeps the older value", () => {
    const read = snap({ used_percent: 42, status: "allowed" });
    const stream = snap({
      used_percent: null,
      status: "rejected",
      resets_at: null,
      observed_at: "2026-11-30T03:05:00.000Z",
      source: "stream",
    });
    expect(mergeSnapshots([read], [stream])).toEqual([
      {
        ...read,
        status: "rejected",
        observed_at: "2026-11-30T03:05:00.000Z",
        source: "stream",
      },
    ]);
  });

  it("drops an older value whose window had already reset by the newer observation", () => {
    const before = snap({ used_percent: 95, status: "rejected", resets_at: "2026-11-30T04:00:00.000Z" });
    const after = snap({
      used_percent: null,
      status: null,
      resets_at: "2026-11-30T09:00:00.000Z",
      observed_at: "2026-11-30T04:30:00.000Z",
      source: "stream",
    });
    const [merged] = mergeSnapshots([before], [after]);
    expect(merged?.used_percent).toBeNull();
    expect(merged?.status).toBeNull();
    expect(merged?.resets_at).toBe("2026-11-30T09:00:00.000Z");
  });

  it("keeps windows and executors apart and stays bounded, dropping the least recently observed", () => {
    const many = Array.from({ length: MAX_QUOTA_SNAPSHOTS + 5 }, (_, at) =>
      snap({ window: `w${at}`, observed_at: new Date(Date.UTC(2026, 10, 30, 0, at)).toISOString() }),
    );
    const merged = mergeSnapshots([], [...many, snap({ executor: "claude" })]);
    expect(merged).toHaveLength(MAX_QUOTA_SNAPSHOTS);
    expect(merged.some((entry) => entry.window === "w0")).toBe(false);
    expect(merged[0]).toMatchObject({ executor: "claude", window: "primary" });
    expect(merged[1]?.window).toBe(`w${MAX_QUOTA_SNAPSHOTS + 4}`);
  });
});

describe("openQuotaStore", () => {
  let stateDir: string;
  beforeEach(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), "ivoai-quota-"));
  });
  afterEach(() => fs.rm(stateDir, { recursive: true, force: true }));

  it("persists privately and reads back per executor", async () => {
    const store = openQuotaStore({ stateDir });
    await store.observe([snap({}), snap({ executor: "claude", window: "five_hour", source: "statusline" })]);
    const dir = await fs.stat(path.join(stateDir, "auto"));
    const file = await fs.stat(store.file);
    expect(dir.mode & 0o777).toBe(0o700);
    expect(file.mode & 0o777).toBe(0o600);
    const again = openQuotaStore({ stateDir });
    expect((await again.read("claude")).map((entry) => entry.window)).toEqual(["five_hour"]);
    expect(await again.read()).toHaveLength(2);
  });

  it("reports a corrupt file and replaces it instead of failing", async () => {
    const problems: string[] = [];
    const store = openQuotaStore({ stateDir, onProblem: (message) => problems.push(message) });
    await fs.mkdir(path.join(stateDir, "auto"), { recursive: true });
    await fs.writeFile(store.file, "{not json");
    expect(await store.read()).toEqual([]);
    expect(problems[0]).toMatch(/corrupt/);
    await store.observe([snap({ used_percent: 7 })]);
    expect(JSON.parse(await fs.readFile(store.file, "utf8")).snapshots[0].used_percent).toBe(7);
  });

  it("refuses a snapshot that breaks the shared schema", async () => {
    const store = openQuotaStore({ stateDir });
    await expect(store.observe([snap({ used_percent: 140 })])).rejects.toThrow();
    expect(await store.read()).toEqual([]);
  });
});
