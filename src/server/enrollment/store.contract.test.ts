// The enrollment store's contract, run on SQLite and on PostgreSQL: what the service and the gateway rely on.
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { IvoaiError } from "../../shared/errors.js";
import { describeBackends } from "../store/backends.test-kit.js";
import { migrate } from "../store/migrations.js";
import { createEnrollmentService } from "./service.js";
import type { ClientRecord, EnrollmentState } from "./state.js";
import { ENROLLMENT_MIGRATIONS, type EnrollmentStore, openEnrollmentStore } from "./store.js";

function client(id: string, revokedAt: string | null = null): ClientRecord {
  return {
    id,
    name: id,
    credential_sha256: "a".repeat(64),
    scopes: ["context:read"],
    created_at: "2026-01-01T00:00:00.000Z",
    enrollment_id: "enr_legacy",
    revoked_at: revokedAt,
  };
}

function legacyState(...clients: ClientRecord[]): string {
  const state: EnrollmentState = { version: 1, enrollments: [], clients };
  return `${JSON.stringify(state, null, 2)}\n`;
}

describeBackends("enrollment store contract", (kit) => {
  let dir = "";
  let schemas = 0;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-enroll-contract-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** A fresh store's name; `connections` opens that many stores on it, each with its own connection. */
  const fresh = () => `ivoai_enrollment_${++schemas}`;
  const connect = async (schema: string, count: number, legacyStatePath?: string) => {
    const stores: EnrollmentStore[] = [];
    for (let index = 0; index < count; index++)
      stores.push(
        await openEnrollmentStore({
          db: await kit.open(schema),
          ...(legacyStatePath === undefined ? {} : { legacyStatePath }),
        }),
      );
    return stores;
  };
  const closeAll = (stores: EnrollmentStore[]) => Promise.all(stores.map((store) => store.close()));

  it("gives exactly one credential when 20 exchanges of one code race through 3 connections", async () => {
    const stores = await connect(fresh(), 3);
    try {
      const services = stores.map((store) => createEnrollmentService({ store }));
      const { code, enrollment } = await (services[0]?.createCode({ ttlMs: 600_000 }) ?? Promise.reject());
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, index) => services[index % 3]?.exchange(code, `racer-${index}`)),
      );
      const won = results.filter((result) => result?.ok);
      expect(won).toHaveLength(1);
      expect(results.filter((result) => result && !result.ok && result.reason === "consumed")).toHaveLength(
        19,
      );
      const state = await (stores[2]?.read() ?? Promise.reject());
      const clients = state.clients.filter((entry) => entry.enrollment_id === enrollment.id);
      expect(clients).toHaveLength(1);
      expect(state.enrollments.find((entry) => entry.id === enrollment.id)?.consumed_by).toBe(clients[0]?.id);
    } finally {
      await closeAll(stores);
    }
  });

  it("applies every one of 30 concurrent mutations from 3 connections exactly once", async () => {
    const stores = await connect(fresh(), 3);
    try {
      await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          stores[index % 3]?.mutate((state) => {
            state.clients.push(client(`cli_${index}`));
            return { state, result: undefined };
          }),
        ),
      );
      for (const store of stores) {
        const ids = (await store.read()).clients.map((entry) => entry.id).sort();
        expect(ids).toEqual(Array.from({ length: 30 }, (_, index) => `cli_${index}`).sort());
      }
    } finally {
      await closeAll(stores);
    }
  });

  it("refuses a revoked credential on another connection at its very next read", async () => {
    const [first, second, ...rest] = await connect(fresh(), 2);
    if (!first || !second) throw new Error("no stores");
    try {
      const writer = createEnrollmentService({ store: first });
      const reader = createEnrollmentService({ store: second });
      const { code } = await writer.createCode({ ttlMs: 600_000 });
      const exchanged = await writer.exchange(code, "laptop");
      if (!exchanged.ok) throw new Error("exchange failed");
      const known = await reader.authenticate(exchanged.credential);
      expect(known).toMatchObject({ id: exchanged.client.id });
      // Nothing changed: the reader answers from the same state (no re-parse, same answer object).
      expect(await reader.authenticate(exchanged.credential)).toBe(known);
      await writer.revokeClient(exchanged.client.id);
      expect(await reader.authenticate(exchanged.credential)).toBeUndefined();
    } finally {
      await closeAll([first, second, ...rest]);
    }
  });

  it("keeps the cached state when a mutation changed nothing, and rolls back one that threw", async () => {
    const [store] = await connect(fresh(), 1);
    if (!store) throw new Error("no store");
    try {
      const service = createEnrollmentService({ store });
      await service.createCode({ ttlMs: 600_000 });
      const before = await store.read();
      expect(await service.exchange("ivoai_enr_unknown", "x")).toEqual({ ok: false, reason: "invalid" });
      await store.mutate((state) => ({ state, result: undefined }));
      expect(await store.read()).toBe(before);
      await expect(
        store.mutate((state) => {
          state.clients.push(client("cli_half"));
          throw new IvoaiError("NOT_FOUND", "refused midway");
        }),
      ).rejects.toThrow(/refused midway/);
      expect((await store.read()).clients).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("imports a legacy state.json once into a store never initialised, then renames it", async () => {
    const schema = fresh();
    const legacy = path.join(dir, `${schema}-state.json`);
    await writeFile(
      legacy,
      legacyState(client("cli_old", null), client("cli_gone", "2026-01-02T00:00:00.000Z")),
      {
        mode: 0o600,
      },
    );
    const [store] = await connect(schema, 1, legacy);
    if (!store) throw new Error("no store");
    await store.mutate((state) => {
      state.clients.push(client("cli_new"));
      return { state, result: undefined };
    });
    await store.close();
    expect((await stat(`${legacy}.imported`)).isFile()).toBe(true);
    await expect(stat(legacy)).rejects.toMatchObject({ code: "ENOENT" });

    // A crash between the import's commit and the rename: the same file back in place is only renamed.
    await writeFile(legacy, await readFile(`${legacy}.imported`, "utf8"), { mode: 0o600 });
    const [again] = await connect(schema, 1, legacy);
    if (!again) throw new Error("no store");
    try {
      expect((await again.read()).clients.map((entry) => [entry.id, entry.revoked_at])).toEqual([
        ["cli_old", null],
        ["cli_gone", "2026-01-02T00:00:00.000Z"],
        ["cli_new", null],
      ]);
      await expect(stat(legacy)).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      await again.close();
    }

    // Another state.json (not the one imported) is neither imported nor moved: the store is initialised.
    await writeFile(legacy, legacyState(client("cli_other")), { mode: 0o600 });
    const [third] = await connect(schema, 1, legacy);
    if (!third) throw new Error("no store");
    try {
      expect((await third.read()).clients.map((entry) => entry.id)).toEqual([
        "cli_old",
        "cli_gone",
        "cli_new",
      ]);
      expect(await readFile(legacy, "utf8")).toBe(legacyState(client("cli_other")));
    } finally {
      await third.close();
    }
  });

  it("imports exactly one of three trees' state.json when their first opens race, and moves only that one", async () => {
    const schema = fresh();
    const files = [1, 2, 3].map((tree) => path.join(dir, `${schema}-tree${tree}-state.json`));
    await Promise.all(
      files.map((file, index) =>
        writeFile(file, legacyState(client(`cli_tree${index + 1}`)), { mode: 0o600 }),
      ),
    );
    // Migrated already (as by an earlier ivoai), so that the three race for the first row, not the migration.
    const db = await kit.open(schema);
    await migrate(db, "enrollment", ENROLLMENT_MIGRATIONS).finally(() => db.close());
    const stores = (await Promise.all(files.map((file) => connect(schema, 1, file)))).flat();
    try {
      const ids = (await (stores[0]?.read() ?? Promise.reject())).clients.map((entry) => entry.id);
      expect(ids).toHaveLength(1);
      const winner = Number(ids[0]?.slice("cli_tree".length)) - 1;
      const left = await Promise.all(
        files.map((file) =>
          stat(file).then(
            () => true,
            () => false,
          ),
        ),
      );
      expect(left).toEqual(files.map((_, index) => index !== winner));
    } finally {
      await closeAll(stores);
    }
  });

  it("refuses a corrupt legacy state.json and initialises nothing, so a fixed one is imported", async () => {
    const schema = fresh();
    const legacy = path.join(dir, `${schema}-state.json`);
    await writeFile(legacy, "{ not json", { mode: 0o600 });
    await expect(connect(schema, 1, legacy)).rejects.toMatchObject({
      code: "STATE_CORRUPT",
      message: expect.stringContaining("is not valid JSON"),
    });
    await writeFile(legacy, legacyState(client("cli_fixed")), { mode: 0o600 });
    const [store] = await connect(schema, 1, legacy);
    if (!store) throw new Error("no store");
    try {
      expect((await store.read()).clients.map((entry) => entry.id)).toEqual(["cli_fixed"]);
    } finally {
      await store.close();
    }
  });

  it("refuses a database that a newer ivoai migrated further", async () => {
    const schema = fresh();
    const [store] = await connect(schema, 1);
    await store?.close();
    const db = await kit.open(schema);
    try {
      await db.run(
        "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ($1, $2, $3, $4)",
        ["enrollment", 2, "from the future", new Date().toISOString()],
      );
    } finally {
      await db.close();
    }
    await expect(connect(schema, 1)).rejects.toMatchObject({ code: "STORE_VERSION" });
  });
});
