// Cross-process safety of the enrollment state: racing exchanges and concurrent CLI writers lose nothing.
import { afterEach, describe, expect, it } from "vitest";
import { racer } from "./enroll-racer.js";
import {
  createCode,
  enroll,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

describe("enrollment state under concurrency", () => {
  const servers: RunningServer[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  async function twoGateways(): Promise<string> {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    await initRoot(dir);
    // The second gateway serves the same tree as a replica: one pid file, two processes sharing the OS lock.
    servers.push(await startServer(dir), await startServer(dir, ["--replica"]));
    return dir;
  }

  it("issues exactly one credential when 20 processes race for one code across two gateways", async () => {
    const root = await twoGateways();
    const { id, code } = await createCode(root);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => racer(servers[index % 2]?.url ?? "", code)),
    );
    expect(results.filter((result) => result.status === 201)).toHaveLength(1);
    expect(results.filter((result) => result.status === 400)).toHaveLength(19);

    // What the store holds, as the CLI (another process) reads it.
    const { enrollments } = JSON.parse(
      (await runIvoai(["server", "enrollment", "list", "--root", root, "--json"])).stdout,
    ) as { enrollments: { id: string; consumed_by: string | null }[] };
    const { clients } = JSON.parse(
      (await runIvoai(["server", "clients", "list", "--root", root, "--json"])).stdout,
    ) as { clients: { id: string; enrollment_id: string }[] };
    const won = clients.filter((client) => client.enrollment_id === id);
    expect(won).toHaveLength(1);
    expect(enrollments.find((entry) => entry.id === id)?.consumed_by).toBe(won[0]?.id);
  });

  it("loses nothing when CLI writers and gateway exchanges run at once", async () => {
    const root = await twoGateways();
    const existing = await Promise.all(Array.from({ length: 8 }, () => createCode(root)));
    const [created, exchanged] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, () => createCode(root))),
      Promise.all(existing.map((entry, index) => enroll(servers[index % 2]?.url ?? "", entry.code))),
    ]);
    expect(exchanged.map((response) => response.status)).toEqual(Array(8).fill(201));

    const list = (
      JSON.parse((await runIvoai(["server", "enrollment", "list", "--root", root, "--json"])).stdout) as {
        enrollments: { id: string; status: string }[];
      }
    ).enrollments;
    const statusOf = new Map(list.map((entry) => [entry.id, entry.status]));
    for (const entry of existing) expect(statusOf.get(entry.id)).toBe("consumed");
    for (const entry of created) expect(statusOf.get(entry.id)).toBe("pending");
    const { clients } = JSON.parse(
      (await runIvoai(["server", "clients", "list", "--root", root, "--json"])).stdout,
    );
    expect(clients).toHaveLength(8);
    // The codes created during the exchanges work.
    const late = await Promise.all(
      created.map((entry, index) => enroll(servers[index % 2]?.url ?? "", entry.code)),
    );
    expect(late.map((response) => response.status)).toEqual(Array(8).fill(201));
  });
});
