// `ivoai executors` with the fake claude, whose `auth status` prints the pretty JSON Claude Code prints:
// the login shown is the parsed state (never a raw `{`), and a logged-out CLI is never shown as admitted.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeClis, installFakeClis } from "./fake-clis.js";
import { runIvoai, tempDir } from "./helpers.js";

interface Entry {
  name: string;
  login: string;
  login_detail: string;
  admitted: boolean;
  admission: string;
}

let dir: string;
let cleanup: () => Promise<void>;
let fakes: FakeClis;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("ivoai-executors-login-"));
  fakes = await installFakeClis(path.join(dir, "fakes"));
  env = {
    ...fakes.env,
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, "config"),
    XDG_STATE_HOME: path.join(dir, "state"),
    XDG_DATA_HOME: path.join(dir, "data"),
    XDG_CACHE_HOME: path.join(dir, "cache"),
  };
});
afterAll(() => cleanup());

async function report(): Promise<{ json: Entry[]; text: string }> {
  const json = await runIvoai(["executors", "--json", "--refresh"], { env, timeoutMs: 60_000 });
  expect(json.code, json.stderr).toBe(0);
  const text = await runIvoai(["executors"], { env, timeoutMs: 60_000 });
  expect(text.code, text.stderr).toBe(0);
  return { json: (JSON.parse(json.stdout) as { executors: Entry[] }).executors, text: text.stdout };
}
const section = (text: string, name: string) => {
  const start = text.indexOf(`${name}: `);
  const end = text.indexOf("\n\n", start);
  return text.slice(start, end === -1 ? undefined : end);
};

describe("ivoai executors: logins", () => {
  it("shows a logged-in claude's parsed login, not its JSON, and no e-mail address", async () => {
    await fakes.script({ codex: {}, claude: {} });
    const { json, text } = await report();
    expect(json.find((entry) => entry.name === "claude")).toMatchObject({
      login: "logged_in",
      login_detail: "via claude.ai, max plan",
      admitted: true,
    });
    expect(json.find((entry) => entry.name === "codex")).toMatchObject({
      login: "logged_in",
      admitted: true,
    });
    const claude = section(text, "claude");
    expect(claude).toMatch(/\n {2}login: {4}logged in — via claude\.ai, max plan\n/);
    expect(claude).toMatch(/\n {2}admitted: yes/);
    expect(text).not.toMatch(/login: +[{[]/);
    expect(text + JSON.stringify(json)).not.toContain("dev@example.com");
  });

  it("shows logged-out CLIs as logged out and not admitted, in text and in --json", async () => {
    await fakes.script({ codex: { logged_in: false }, claude: { logged_in: false } });
    const { json, text } = await report();
    for (const name of ["claude", "codex"]) {
      expect(json.find((entry) => entry.name === name)).toMatchObject({
        login: "logged_out",
        admitted: false,
        admission: `${name} is not logged in`,
      });
      const shown = section(text, name);
      expect(shown).toMatch(/\n {2}login: {4}logged out/);
      expect(shown).toContain(`\n  admitted: NO — ${name} is not logged in`);
    }
    expect(text).not.toMatch(/login: +[{[]/);
  });

  it("probes again instead of showing a cached raw login line from an older ivoai", async () => {
    await fakes.script({ codex: {}, claude: {} });
    await report();
    const file = path.join(dir, "state", "ivoai", "auto", "executors.json");
    const cache = JSON.parse(await readFile(file, "utf8")) as { executors: Entry[] };
    for (const entry of cache.executors) if (entry.name === "claude") entry.login_detail = "{";
    await writeFile(file, JSON.stringify(cache));
    const shown = await runIvoai(["executors", "--json"], { env, timeoutMs: 60_000 });
    expect(shown.code, shown.stderr).toBe(0);
    const claude = (JSON.parse(shown.stdout) as { executors: Entry[] }).executors.find(
      (entry) => entry.name === "claude",
    );
    expect(claude?.login_detail).toBe("via claude.ai, max plan");
  });
});
