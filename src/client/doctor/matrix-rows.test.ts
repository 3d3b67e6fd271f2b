// The rows doctor prints for what a probe saw: each kind of server and agent state, and a stale skill.
import { describe, expect, it } from "vitest";
import type { ComponentRow, ServerRow } from "./doctor.js";
import { agentMatrixRow, serverMatrixRow, skillsMatrixRow } from "./matrix-rows.js";

const URL = "https://ai.acme.example";
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
const agent = (over: Partial<ComponentRow>): ComponentRow => ({
  component: "claude",
  installed: "yes",
  available: "yes",
  healthy: "unknown",
  version: "2.1.332",
  path: "/usr/bin/claude",
  detail: "pre-existing",
  ...over,
});

describe("serverMatrixRow", () => {
  it("is required and healthy when ready, with its protocol", () => {
    expect(serverMatrixRow(server({}), URL)).toMatchObject({
      component: "server:acme",
      status: "supported",
      healthy: "yes",
      required: true,
      active: "protocol 1",
      why: "reachable, ready, protocol 1",
      next: null,
    });
  });
  it("says a disabled server is left out and not required", () => {
    expect(serverMatrixRow(server({ enabled: false }), URL)).toMatchObject({
      healthy: "unknown",
      required: false,
      why: "disabled",
    });
  });
  it("marks another protocol unsupported and a timeout unknown", () => {
    const conflict = server({
      readiness: "unknown",
      protocol_version: null,
      detail: `${URL} speaks protocol 2; this ivoai speaks 1`,
    });
    expect(serverMatrixRow(conflict, URL)).toMatchObject({ status: "unsupported", healthy: "no" });
    const slow = server({ reachable: "no", readiness: "unknown", detail: "timed out after 5 s" });
    expect(serverMatrixRow(slow, URL)).toMatchObject({
      status: "unknown",
      healthy: "no",
      why: "unreachable: timed out after 5 s",
    });
  });
});

describe("agentMatrixRow", () => {
  it("names the login detail, never more", () => {
    const row = agentMatrixRow({
      ...agent({ logged_in: "logged_in" }),
      login_detail: "via claude.ai, max plan",
    });
    expect(row).toMatchObject({
      healthy: "yes",
      why: "2.1.332 (pre-existing), logged in (via claude.ai, max plan)",
    });
  });
  it("says a --version that failed is unsupported, with how to see why", () => {
    const row = agentMatrixRow(
      agent({
        available: "no",
        healthy: "no",
        version: null,
        detail: "--version exited with status 1: boom",
      }),
    );
    expect(row).toMatchObject({
      status: "unsupported",
      healthy: "no",
      why: "--version exited with status 1: boom",
    });
    expect(row.next).toBe("run '/usr/bin/claude --version' to see why it does not start");
  });
});

describe("skillsMatrixRow", () => {
  it("says a packaged skill that differs from the served one is unhealthy", () => {
    const row = skillsMatrixRow(
      {
        found: true,
        file: "/p/skills/ivoai-memory-context/SKILL.md",
        matches: false,
        digest: `sha256:${"a".repeat(64)}`,
      },
      `sha256:${"b".repeat(64)}`,
    );
    expect(row).toMatchObject({ healthy: "no", required: false });
    expect(row.why).toMatch(/differs from the one skills\/get serves/);
  });
});
