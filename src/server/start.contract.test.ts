// A start that fails part-way (here: its port is taken) closes every store and connection it had opened.
import net from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers.js";
import { createThrowawayDatabase, type ThrowawayDatabase, usePostgres } from "../../test/postgres.js";
import { silentLogger } from "../shared/logger.js";
import { initServer } from "./init.js";
import { startGateway } from "./start.js";

describe("startGateway", async () => {
  let database: ThrowawayDatabase | undefined;
  let root = "";
  let cleanup = async () => {};
  beforeAll(async () => {
    database = await createThrowawayDatabase();
    ({ dir: root, cleanup } = await tempDir());
    await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
    await usePostgres(root, database.url);
  });
  afterAll(async () => {
    await database?.drop();
    await cleanup();
  });

  it("closes what it opened when it cannot listen, leaving no PostgreSQL connection", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const connections = async () => {
      const admin = new pg.Client({ connectionString: database?.url });
      await admin.connect();
      try {
        const { rows } = await admin.query(
          "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
        );
        return rows[0].n as number;
      } finally {
        await admin.end();
      }
    };
    try {
      // It really opens connections: a gateway that starts holds some.
      const running = await startGateway({ root, logger: silentLogger, listen: "127.0.0.1:0" });
      expect(await connections()).toBeGreaterThan(0);
      await running.close();
      await expect(startGateway({ root, logger: silentLogger, listen: `127.0.0.1:${port}` })).rejects.toThrow(
        /cannot listen/,
      );
      expect(await connections()).toBe(0);
    } finally {
      taken.close();
    }
  });
});
