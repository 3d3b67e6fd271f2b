import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IvoaiError } from "../../../shared/errors.js";
import { type ControlServer, controlClient, startControlServer } from "./control.js";
import { CONTROL_ROUTES, type ControlHandlers, MAX_CONTROL_BODY_BYTES } from "./protocol.js";

let root: string;
let socketPath: string;
let server: ControlServer | undefined;
const calls: unknown[] = [];

const handlers: ControlHandlers = {
  async delegate(input) {
    calls.push(["delegate", input]);
    if (input.instructions === "explode") throw new Error("boom\n    at secret/stack.js:1");
    if (input.instructions === "refuse") throw new IvoaiError("CONFLICT", "the worker cap is reached");
    return { task_id: "d1", state: "pending", reason: "waiting for t1" };
  },
  async status(taskId) {
    calls.push(["status", taskId]);
    if (taskId === "nope") throw new IvoaiError("NOT_FOUND", "no task nope");
    return { tasks: [{ task_id: taskId ?? "t1", state: "running" }] };
  },
  async readArtifact(ref, offset, length) {
    calls.push(["read", ref, offset, length]);
    return { text: "abc", offset: offset ?? 0, next_offset: null, bytes: 3, sha256: "0".repeat(64) };
  },
};

/** A raw request over the socket, to see status codes the client turns into errors. */
function raw(
  route: string,
  options: { token?: string; body?: string | Buffer; method?: string; chunked?: boolean } = {},
): Promise<{ status: number; json: { error?: { code: string; message: string } } }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        path: route,
        method: options.method ?? "POST",
        headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      },
    );
    // The server may answer 413 and close before the whole body is sent.
    req.on("error", (error) =>
      (error as NodeJS.ErrnoException).code === "EPIPE" ? undefined : reject(error),
    );
    if (options.chunked) {
      // No content-length: the server must count while reading.
      const body = Buffer.from(options.body ?? "");
      for (let at = 0; at < body.length; at += 8192) req.write(body.subarray(at, at + 8192));
      req.end();
    } else req.end(options.body ?? "");
  });
}

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(tmpdir(), "ivoai-ctl-"));
  socketPath = path.join(root, "run", "control.sock");
  calls.length = 0;
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await fs.rm(root, { recursive: true, force: true });
});

describe("control server", () => {
  it("listens on a 0600 socket in a 0700 directory and serves the three operations to the client", async () => {
    server = await startControlServer({ socketPath, handlers });
    expect(server.token).toMatch(/^ivoai_orc_[A-Za-z0-9_-]{43}$/);
    expect((await fs.lstat(socketPath)).mode & 0o777).toBe(0o600);
    expect((await fs.lstat(path.dirname(socketPath))).mode & 0o777).toBe(0o700);
    const client = controlClient(socketPath, server.token);
    expect(
      await client.delegate({
        instructions: "look",
        kind: "research",
        depends_on: ["t1"],
        signals: { risk: 0.2 },
      }),
    ).toEqual({ task_id: "d1", state: "pending", reason: "waiting for t1" });
    expect(await client.status()).toEqual({ tasks: [{ task_id: "t1", state: "running" }] });
    expect(await client.status("t2")).toEqual({ tasks: [{ task_id: "t2", state: "running" }] });
    expect((await client.readArtifact(`art_${"a".repeat(32)}`, 5, 10)).offset).toBe(5);
    expect(calls).toEqual([
      ["delegate", { instructions: "look", kind: "research", depends_on: ["t1"], signals: { risk: 0.2 } }],
      ["status", undefined],
      ["status", "t2"],
      ["read", `art_${"a".repeat(32)}`, 5, 10],
    ]);
  });

  it("answers 401 to a missing or wrong token without calling the handler", async () => {
    server = await startControlServer({ socketPath, handlers });
    const body = JSON.stringify({ instructions: "x", kind: "research" });
    expect((await raw(CONTROL_ROUTES.delegate, { body })).status).toBe(401);
    const wrong = `${server.token.slice(0, -1)}${server.token.endsWith("A") ? "B" : "A"}`;
    const answer = await raw(CONTROL_ROUTES.delegate, { token: wrong, body });
    expect(answer).toEqual({
      status: 401,
      json: { error: { code: "UNAUTHORIZED", message: "a valid control token is required" } },
    });
    await expect(controlClient(socketPath, "ivoai_orc_wrong").status()).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    expect(calls).toEqual([]);
  });

  it("answers 413 to a body over 64 KiB", async () => {
    server = await startControlServer({ socketPath, handlers });
    const body = JSON.stringify({ instructions: "x".repeat(MAX_CONTROL_BODY_BYTES), kind: "research" });
    const answer = await raw(CONTROL_ROUTES.delegate, { token: server.token, body });
    expect(answer.status).toBe(413);
    expect(answer.json.error?.code).toBe("PAYLOAD_TOO_LARGE");
    const streamed = await raw(CONTROL_ROUTES.delegate, { token: server.token, body, chunked: true });
    expect(streamed.status).toBe(413);
    expect(calls).toEqual([]);
  });

  it("maps bad input and handler failures to JSON errors and keeps serving", async () => {
    const unexpected: unknown[] = [];
    server = await startControlServer({ socketPath, handlers, onError: (error) => unexpected.push(error) });
    const token = server.token;
    expect(await raw(CONTROL_ROUTES.delegate, { token, body: "{not json" })).toMatchObject({
      status: 400,
      json: { error: { code: "USAGE", message: "the request body is not JSON" } },
    });
    const bad = await raw(CONTROL_ROUTES.delegate, { token, body: JSON.stringify({ kind: "change" }) });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(/^invalid arguments: .*instructions/);
    expect((await raw("/v1/other", { token })).status).toBe(404);
    expect((await raw(CONTROL_ROUTES.status, { token, method: "GET" })).status).toBe(405);

    const client = controlClient(socketPath, token);
    await expect(client.delegate({ instructions: "refuse", kind: "review" })).rejects.toMatchObject({
      code: "CONFLICT",
      message: "the worker cap is reached",
    });
    await expect(client.status("nope")).rejects.toMatchObject({ code: "NOT_FOUND", message: "no task nope" });
    const exploded = await raw(CONTROL_ROUTES.delegate, {
      token,
      body: JSON.stringify({ instructions: "explode", kind: "analysis" }),
    });
    expect(exploded).toEqual({
      status: 500,
      json: { error: { code: "INTERNAL", message: "internal error: boom" } },
    });
    expect(unexpected).toHaveLength(1);
    expect(await client.status()).toEqual({ tasks: [{ task_id: "t1", state: "running" }] });
  });

  it("bounds a handler in time", async () => {
    server = await startControlServer({
      socketPath,
      handlerTimeoutMs: 50,
      handlers: { ...handlers, status: () => new Promise(() => undefined) },
    });
    await expect(controlClient(socketPath, server.token).status()).rejects.toMatchObject({
      code: "NETWORK",
      message: expect.stringMatching(/did not answer within 50 ms/),
    });
  });

  it("replaces a stale socket left by a killed process, refuses a live one and a non-socket", async () => {
    await fs.mkdir(path.dirname(socketPath), { mode: 0o700 });
    const child = spawn(
      process.execPath,
      [
        "-e",
        `require("net").createServer().listen(${JSON.stringify(socketPath)}, () => console.log("ready"))`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise((resolve) => createInterface({ input: child.stdout }).once("line", resolve));
    await expect(startControlServer({ socketPath, handlers })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringMatching(/another process is listening/),
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    expect((await fs.lstat(socketPath)).isSocket()).toBe(true);
    server = await startControlServer({ socketPath, handlers });
    expect(await controlClient(socketPath, server.token).status()).toMatchObject({ tasks: [{}] });
    await server.close();
    server = undefined;
    await expect(fs.lstat(socketPath)).rejects.toMatchObject({ code: "ENOENT" });

    await fs.writeFile(socketPath, "not a socket");
    await expect(startControlServer({ socketPath, handlers })).rejects.toMatchObject({ code: "UNSAFE_PATH" });
  });

  it("refuses a runtime directory others can enter or that is a symbolic link", async () => {
    const open = path.join(root, "open");
    await fs.mkdir(open);
    await fs.chmod(open, 0o755);
    await expect(
      startControlServer({ socketPath: path.join(open, "c.sock"), handlers }),
    ).rejects.toMatchObject({ code: "UNSAFE_PATH" });
    await fs.mkdir(path.join(root, "private"), { mode: 0o700 });
    await fs.symlink(path.join(root, "private"), path.join(root, "link"));
    await expect(
      startControlServer({ socketPath: path.join(root, "link", "c.sock"), handlers }),
    ).rejects.toMatchObject({ code: "UNSAFE_PATH", message: expect.stringMatching(/symbolic link/) });
  });

  it("refuses every request once closed, and the client reports the channel unreachable", async () => {
    server = await startControlServer({ socketPath, handlers });
    const client = controlClient(socketPath, server.token);
    await server.close();
    server = undefined;
    await expect(client.status()).rejects.toMatchObject({
      code: "NETWORK",
      message: expect.stringMatching(/cannot reach the ivoai supervisor's control channel/),
    });
  });
});
