import { describe, expect, it } from "vitest";
import { isIvoaiError } from "../../shared/errors.js";
import { describeBackends } from "./backends.test-kit.js";
import { migrate } from "./migrations.js";
import { openPostgresSql } from "./postgres.js";
import { forUpdate, toPositional } from "./sql.js";

describe("toPositional", () => {
  it("binds $n in the order used, a repeated $n twice, and refuses a missing one", () => {
    expect(toPositional("a = $2 AND b = $1 OR c = $2", ["x", "y"])).toEqual({
      sql: "a = ? AND b = ? OR c = ?",
      params: ["y", "x", "y"],
    });
    expect(() => toPositional("a = $3", [1])).toThrow(/\$3/);
  });
});

const COUNTER: Parameters<typeof migrate>[2] = [
  { version: 1, name: "counter", up: "CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)" },
  { version: 2, name: "seed", up: "INSERT INTO counter (id, n) VALUES (1, 0)" },
];

describeBackends("SQL store layer", (kit) => {
  it("migrates once, then finds nothing to do; reads, writes and counts with $n parameters", async () => {
    const db = await kit.open("layer");
    try {
      expect(await migrate(db, "layer", COUNTER)).toEqual({ from: 0, to: 2 });
      expect(await migrate(db, "layer", COUNTER)).toEqual({ from: 2, to: 2 });
      await db.run("UPDATE counter SET n = $1 WHERE id = $2 AND $1 > 0", [42, 1]);
      expect(await db.get("SELECT n FROM counter WHERE id = $1", [1])).toEqual({ n: 42 });
      const count = await db.get<{ count: number }>("SELECT COUNT(*) AS count FROM counter");
      expect(count?.count).toBe(1);
    } finally {
      await db.close();
    }
  });

  it("rolls a failed transaction back entirely", async () => {
    const db = await kit.open("layer");
    try {
      await expect(
        db.transaction(async (tx) => {
          await tx.run("UPDATE counter SET n = 0 WHERE id = 1");
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await db.get("SELECT n FROM counter WHERE id = 1")).toEqual({ n: 42 });
    } finally {
      await db.close();
    }
  });

  it("serialises read-modify-write transactions from several connections: no update is lost", async () => {
    const connections = await Promise.all([kit.open("layer"), kit.open("layer"), kit.open("layer")]);
    try {
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (connections[i % 3] as (typeof connections)[number]).transaction(async (tx) => {
            const row = await tx.get<{ n: number }>(
              `SELECT n FROM counter WHERE id = 1${forUpdate(tx.dialect)}`,
            );
            await tx.run("UPDATE counter SET n = $1 WHERE id = 1", [Number(row?.n) + 1]);
          }),
        ),
      );
      expect(await connections[0]?.get("SELECT n FROM counter WHERE id = 1")).toEqual({ n: 72 });
    } finally {
      await Promise.all(connections.map((db) => db.close()));
    }
  });

  it("lets several processes migrate at once, and refuses a database a newer ivoai migrated", async () => {
    const connections = await Promise.all([kit.open("race"), kit.open("race"), kit.open("race")]);
    try {
      const results = await Promise.all(connections.map((db) => migrate(db, "race", COUNTER)));
      expect(results.filter((result) => result.from === 0)).toHaveLength(1);
      expect(await connections[0]?.get("SELECT COUNT(*) AS count FROM counter")).toEqual({ count: 1 });
      const error = await migrate(
        connections[0] as (typeof connections)[number],
        "race",
        COUNTER.slice(0, 1),
      ).catch((caught: unknown) => caught);
      expect(isIvoaiError(error) && error.code).toBe("STORE_VERSION");
      expect(String((error as Error).message)).toMatch(/version 2.*up to 1.*upgrade ivoai/);
    } finally {
      await Promise.all(connections.map((db) => db.close()));
    }
  });
});

describe("PostgreSQL errors", () => {
  it("say PostgreSQL is unreachable without the connection string or its password", async () => {
    const url = "postgres://ivoai:s3cr3t-pass@127.0.0.1:1/nowhere";
    const error = await openPostgresSql({ url, schema: "x" }).catch((caught: unknown) => caught);
    expect(isIvoaiError(error) && error.code).toBe("STORE_UNAVAILABLE");
    expect(
      JSON.stringify({ message: (error as Error).message, data: (error as { data?: unknown }).data }),
    ).not.toMatch(/s3cr3t/);
  });
});

describe("PostgreSQL change signal", async () => {
  const { createThrowawayDatabase } = await import("../../../test/postgres.js");
  const { listenForChanges } = await import("./postgres.js");

  it("says changed after a NOTIFY, and at every check while its connection is down", async () => {
    const database = await createThrowawayDatabase();
    const signals: string[] = [];
    let wake: (() => void) | undefined;
    const next = () => new Promise<void>((resolve) => (wake = resolve));
    const signal = await listenForChanges(database.url, "ivoai_test", {
      retryMs: 200,
      onSignal: (reason) => {
        signals.push(reason);
        wake?.();
      },
    });
    const other = await openPostgresSql({ url: database.url, schema: "other" });
    try {
      expect(signal.takeChanged()).toBe(true);
      expect(signal.takeChanged()).toBe(false);
      let notified = next();
      await other.get("SELECT pg_notify('ivoai_test', '')");
      await notified;
      expect(signal.takeChanged()).toBe(true);
      expect(signal.takeChanged()).toBe(false);
      // A rolled-back write notifies nobody: the next notification seen is the sentinel sent after it.
      await other
        .transaction(async (tx) => {
          await tx.get("SELECT pg_notify('ivoai_test', 'rolled back')");
          throw new Error("rolled back");
        })
        .catch(() => {});
      notified = next();
      await other.get("SELECT pg_notify('ivoai_test', 'sentinel')");
      await notified;
      expect(signals).toEqual(["connected", "notification", "notification"]);
      expect(signal.takeChanged()).toBe(true);
      // The listening connection dies: every check says changed until it is back, and once after.
      const lost = new Promise<void>((resolve) => {
        wake = () => signals.at(-1) === "disconnected" && resolve();
      });
      await other.get(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN ivoai_test' AND pid <> pg_backend_pid()",
      );
      await lost;
      expect([signal.takeChanged(), signal.takeChanged()]).toEqual([true, true]);
      await new Promise<void>((resolve) => {
        wake = () => signals.at(-1) === "connected" && resolve();
      });
      expect(signals).toEqual(["connected", "notification", "notification", "disconnected", "connected"]);
      expect(signal.takeChanged()).toBe(true);
      expect(signal.takeChanged()).toBe(false);
      notified = next();
      await other.get("SELECT pg_notify('ivoai_test', '')");
      await notified;
      expect(signal.takeChanged()).toBe(true);
    } finally {
      await signal.close();
      await other.close();
      await database.drop();
    }
  });
});

describe("PostgreSQL pool", async () => {
  const { createThrowawayDatabase } = await import("../../../test/postgres.js");
  const net = await import("node:net");

  it("lets a request wait its turn past 5 s for a pooled connection while a long transaction holds it", async () => {
    const database = await createThrowawayDatabase();
    const db = await openPostgresSql({ url: database.url, schema: "pool_wait", max: 1 });
    try {
      const long = db.transaction((tx) => tx.get("SELECT pg_sleep(5.5) AS slept"));
      const queued = db.get<{ one: number }>("SELECT 1 AS one");
      await long;
      expect((await queued)?.one).toBe(1);
    } finally {
      await db.close();
      await database.drop();
    }
  }, 20_000);

  it("fails a new connection to a host that never answers after 5 s, not after the pool's wait", async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as import("node:net").AddressInfo;
    try {
      const error = await openPostgresSql({ url: `postgres://u:p@127.0.0.1:${port}/db`, schema: "x" }).catch(
        (caught: unknown) => caught,
      );
      expect(isIvoaiError(error) && error.code).toBe("STORE_UNAVAILABLE");
      // Which timer ended it, not how long a busy host took: the client's own 5 s timeout (pg's "timeout
      // expired"), not the pool's 30 s one ("Connection terminated due to connection timeout").
      expect((error as Error).message).toBe("PostgreSQL is not reachable: timeout expired");
    } finally {
      silent.close();
    }
  }, 120_000);
});
