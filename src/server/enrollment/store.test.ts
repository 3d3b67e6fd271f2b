import { statSync } from "node:fs";
import { mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EnrollmentState } from "./state.js";
import { createEnrollmentStore, type EnrollmentStore } from "./store.js";

describe("enrollment store", () => {
  let dir: string;
  let statePath: string;
  let store: EnrollmentStore;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-enroll-store-"));
    statePath = path.join(dir, "state.json");
    store = createEnrollmentStore({ statePath, lockPath: path.join(dir, "state.lock") });
  });
  afterEach(async () => {
    store.close();
    await rm(dir, { recursive: true, force: true });
  });

  function stateText(name: string, revokedAt: string | null): string {
    const state: EnrollmentState = {
      version: 1,
      enrollments: [],
      clients: [
        {
          id: "cli_1",
          name,
          credential_sha256: "a".repeat(64),
          scopes: ["context:read"],
          created_at: "2026-01-01T00:00:00.000Z",
          enrollment_id: "enr_1",
          revoked_at: revokedAt,
        },
      ],
    };
    return JSON.stringify(state);
  }

  it("sees a state rewritten in place with the same size and modification time (the change time moved)", async () => {
    // A fixed, whole-second mtime: utimes can put it back exactly, as a copy tool or a restore could.
    const mtime = 1_700_000_000;
    const revoked = stateText("laptop", "2026-01-02T00:00:00.000Z");
    // The same length (the name padded), so the file's size does not tell the two apart either.
    const active = stateText("laptop".padEnd(6 + revoked.length - stateText("laptop", null).length), null);
    expect(active.length).toBe(revoked.length);
    await writeFile(statePath, active);
    await utimes(statePath, mtime, mtime);
    expect((await store.read()).clients[0]?.revoked_at).toBeNull();
    const before = statSync(statePath, { bigint: true });
    // Rewritten in place (same inode) until the kernel's clock has moved the change time, which utimes cannot set.
    let after = before;
    while (after.ctimeNs === before.ctimeNs) {
      await writeFile(statePath, revoked);
      await utimes(statePath, mtime, mtime);
      after = statSync(statePath, { bigint: true });
    }
    expect([after.dev, after.ino, after.mtimeNs, after.size]).toEqual([
      before.dev,
      before.ino,
      before.mtimeNs,
      before.size,
    ]);
    expect((await store.read()).clients[0]?.revoked_at).toBe("2026-01-02T00:00:00.000Z");
  });
});
