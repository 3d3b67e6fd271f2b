import { promises as fs } from "node:fs";
import { createServer, type Server, Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { IvoaiError } from "../shared/errors.js";
import { describeError } from "./error-text.js";

const server = { server: true };
const client = { server: false };

async function failure(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

function listening(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const net = createServer();
    net.once("error", reject);
    net.listen(port, "127.0.0.1", () => resolve(net));
  });
}

describe("error mapping", () => {
  it("keeps an IvoaiError's code and message, with exit 2 for usage and 1 otherwise", () => {
    expect(describeError(new IvoaiError("USAGE", "bad flag"), client)).toEqual({
      code: "USAGE",
      message: "bad flag",
      exitCode: 2,
    });
    expect(describeError(new IvoaiError("NOT_FOUND", "no such thing"), client).exitCode).toBe(1);
  });

  it("turns a missing file into a sentence naming it", async () => {
    const missing = path.join(tmpdir(), "ivoai-no-such-file", "x.toml");
    const report = describeError(await failure(() => fs.readFile(missing)), client);
    expect(report).toMatchObject({ code: "NOT_FOUND", exitCode: 1 });
    expect(report.message).toBe(`${missing} does not exist: check the path`);
    expect(report.message).not.toContain("ENOENT");
  });

  it("says a port is in use and what to change, for a real listener conflict", async () => {
    const holder = await listening();
    const port = (holder.address() as { port: number }).port;
    try {
      const report = describeError(await failure(() => listening(port)), server);
      expect(report.message).toBe(
        `port ${port} on 127.0.0.1 is in use: stop the other process or change --listen`,
      );
    } finally {
      holder.close();
    }
  });

  it("says a connection was refused or a fetch failed, with the next step", async () => {
    const closed = await listening();
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = describeError(
      await failure(
        () =>
          new Promise<Socket>((resolve, reject) => {
            const socket = new Socket();
            socket.once("error", reject);
            socket.connect(port, "127.0.0.1", () => resolve(socket));
          }),
      ),
      client,
    );
    expect(refused.message).toBe(
      `could not reach 127.0.0.1:${port} (connection refused: nothing is listening there): check the URL and network`,
    );
    const fetched = describeError(await failure(() => fetch(`http://127.0.0.1:${port}/`)), client);
    expect(fetched).toMatchObject({ code: "NETWORK", exitCode: 1 });
    expect(fetched.message).toContain("connection refused");
    expect(fetched.message).toContain("check the URL and network");
    expect(fetched.message).not.toContain("fetch failed");
  });

  it("says whose files they are on a permission error, by context", () => {
    // A permission error as Node raises it (as root, the test cannot provoke one: the e2e test runs as nobody).
    const denied = Object.assign(new Error("EACCES: permission denied, open '/srv/x/state.json'"), {
      code: "EACCES",
      syscall: "open",
      path: "/srv/x/state.json",
    });
    expect(describeError(denied, server).message).toBe(
      "permission denied reading /srv/x/state.json: run as the server's user or fix the permissions",
    );
    expect(describeError(denied, client).message).toBe(
      "permission denied reading /srv/x/state.json: run as the user who owns it or fix the permissions",
    );
  });

  it("explains a database that cannot be opened, and leaves the unknown as unexpected", async () => {
    const dir = await fs.mkdtemp(path.join(tmpdir(), "ivoai-err-"));
    try {
      const report = describeError(await failure(async () => new Database(dir)), server);
      expect(report.code).toBe("PERMISSION_DENIED");
      expect(report.message).toContain("run as the server's user or fix the permissions");
      const missing = describeError(
        await failure(async () => new Database(path.join(dir, "missing-dir", "x.sqlite"))),
        server,
      );
      expect(missing.message).toBe(
        'a database directory does not exist: run "ivoai server init --root DIR" for this tree',
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
    expect(describeError(new Error("boom\nstack"), client)).toEqual({
      code: "INTERNAL",
      message: "unexpected error: boom",
      exitCode: 1,
    });
  });
});
