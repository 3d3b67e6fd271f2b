// The next step doctor names for each kind of problem row, and none for a healthy one.
import { describe, expect, it } from "vitest";
import type { ComponentRow, FileRow, ServerRow } from "./doctor.js";
import { CONNECT_FIRST_SERVER, componentNext, fileNext, reportNext, serverNext } from "./next-steps.js";

const agent = (over: Partial<ComponentRow>): ComponentRow => ({
  component: "codex",
  installed: "yes",
  available: "yes",
  healthy: "unknown",
  version: "1.0.0",
  path: "/usr/bin/codex",
  detail: "pre-existing",
  ...over,
});
const server = (over: Partial<ServerRow>): ServerRow => ({
  alias: "acme",
  id: "srv_1",
  purpose: "handbook",
  enabled: true,
  credential_stored: true,
  reachable: "yes",
  readiness: "ready",
  tls: "valid",
  protocol_version: 1,
  features: { context: true, memory: true },
  detail: "",
  ...over,
});
const URL = "https://ai.acme.example";

describe("doctor's next steps", () => {
  it("names the login command of a logged-out agent, and nothing for a healthy one", () => {
    expect(componentNext(agent({ logged_in: "logged_out" }))).toBe("ivoai connect chatgpt");
    expect(componentNext(agent({ component: "claude", logged_in: "logged_out" }))).toBe(
      "ivoai connect claude",
    );
    expect(componentNext(agent({ logged_in: "logged_in" }))).toBeNull();
    expect(componentNext(agent({ available: "no" }))).toBe(
      "run '/usr/bin/codex --version' to see why it does not start",
    );
    expect(componentNext(agent({ component: "native-sqlite", healthy: "no" }))).toMatch(/npm rebuild/);
  });

  it("gives the chmod for a file with a loose mode, and says to replace a symlink", () => {
    const file: FileRow = {
      path: "/h/.config/ivoai/secrets.json",
      expected: "0600",
      actual: "0644",
      ok: false,
    };
    expect(fileNext(file)).toBe("chmod 0600 /h/.config/ivoai/secrets.json");
    expect(fileNext({ ...file, actual: "symlink" })).toBe(
      "replace the symlink /h/.config/ivoai/secrets.json with a regular file",
    );
    expect(fileNext({ ...file, actual: "0600", ok: true })).toBeNull();
  });

  it("says what to check for each server problem, and nothing for a ready or disabled one", () => {
    expect(serverNext(server({}), URL)).toBeNull();
    expect(serverNext(server({ enabled: false, reachable: "no" }), URL)).toBeNull();
    expect(serverNext(server({ tls: "invalid" }), URL)).toMatch(
      /^the TLS certificate of https:\/\/ai\.acme\.example is not valid: .*ivoai connect server test acme$/,
    );
    const plain =
      "the server at https://127.0.0.1:8080 answered plain HTTP, not TLS: use http://127.0.0.1:8080";
    expect(serverNext(server({ tls: "invalid", detail: plain }), URL)).toBe(
      `${plain}; a profile's URL changes with 'ivoai disconnect server acme' and connecting it again`,
    );
    expect(serverNext(server({ reachable: "no", readiness: "unknown" }), URL)).toMatch(
      /^check that the server at https:\/\/ai\.acme\.example is running/,
    );
    expect(serverNext(server({ readiness: "ready_degraded" }), URL)).toMatch(
      /^ivoai connect server test acme /,
    );
  });

  it("collects the steps, one setup for the missing agents, and how to connect a first server", () => {
    const rows = [
      { ...agent({ installed: "no", available: "no", path: null }), next: "ivoai setup --agents codex" },
      { ...agent({ component: "claude", logged_in: "logged_out" }), next: "ivoai connect claude" },
    ];
    expect(reportNext(["codex", "claude", "opencode"], rows, [], [])).toEqual([
      "install the agent CLIs (codex not found): ivoai setup --agents codex",
      "claude: ivoai connect claude",
      CONNECT_FIRST_SERVER,
    ]);
    const connected = [{ ...server({}), next: null }];
    expect(reportNext(["codex"], [], [], connected)).toEqual([]);
  });
});
