import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { serverPaths } from "../../config/server-paths.js";
import { claimPidFile, processStartTicks, readPidFile, whyNotOurServer } from "./pid-file.js";

describe("pid file", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  const paths = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-pid-"));
    dirs.push(dir);
    return serverPaths(dir);
  };
  const info = { version: "1.0.0", now: new Date("2026-11-30T00:00:00Z") };

  it("records this process with its start time, refuses a second claim, and is removed on release", async () => {
    const tree = await paths();
    const handle = await claimPidFile(tree, info);
    expect(handle.record).toMatchObject({
      pid: process.pid,
      start_ticks: await processStartTicks(process.pid),
    });
    await expect(claimPidFile(tree, info)).rejects.toThrow(
      `a server for ${tree.root} is already running (pid ${process.pid})`,
    );
    await handle.update({ url: "http://127.0.0.1:1234", public_url: "https://ai.example.com" });
    expect(await readPidFile(tree.pidFile)).toMatchObject({
      state: "running",
      record: { url: "http://127.0.0.1:1234", public_url: "https://ai.example.com" },
    });
    await handle.release();
    expect(await readPidFile(tree.pidFile)).toEqual({ state: "absent" });
  });

  it("replaces a stale record, and a release never removes another server's file", async () => {
    const tree = await paths();
    const first = await claimPidFile(tree, info);
    // This pid, but a start time that is not this process's: the pid was reused.
    const reused = { ...first.record, start_ticks: "1" };
    await writeFile(tree.pidFile, JSON.stringify(reused));
    expect(await readPidFile(tree.pidFile)).toMatchObject({
      state: "stale",
      reason: `pid ${process.pid} now belongs to another program`,
    });
    const second = await claimPidFile(tree, info);
    // Another server (pid 1, with its real start time) took the root meanwhile: our release leaves it alone.
    const other = { ...second.record, pid: 1, start_ticks: await processStartTicks(1) };
    await writeFile(tree.pidFile, JSON.stringify(other));
    await second.release();
    expect(JSON.parse(await readFile(tree.pidFile, "utf8"))).toMatchObject({ pid: 1 });
  });

  it("reads an unparseable pid file as stale", async () => {
    const tree = await paths();
    const handle = await claimPidFile(tree, info);
    await handle.release();
    await writeFile(tree.pidFile, "12ab\n");
    expect(await readPidFile(tree.pidFile)).toEqual({ state: "stale", reason: "unreadable pid file" });
  });

  it.runIf(process.platform === "linux")(
    "takes neither a record without a start time nor a live process that is not this root's server",
    async () => {
      const tree = await paths();
      const handle = await claimPidFile(tree, info);
      await writeFile(tree.pidFile, JSON.stringify({ ...handle.record, start_ticks: null }));
      expect(await readPidFile(tree.pidFile)).toMatchObject({ state: "stale" });
      expect(await whyNotOurServer({ ...handle.record, start_ticks: null }, tree)).toBe(
        "the pid file records no process start time",
      );
      // This test's process: the right pid and start time, but not 'ivoai server start'.
      await writeFile(tree.pidFile, JSON.stringify(handle.record));
      expect(await whyNotOurServer(handle.record, tree)).toBe(
        `pid ${process.pid} is not 'ivoai server start'`,
      );
    },
  );
});
