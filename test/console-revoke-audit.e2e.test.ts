// `ivoai server console revoke` records what it ends in the audit log, as the console's own revocation does:
// one client_revoked event per session (one id, or each of --all), the local operator as actor, and no secret.
import { userInfo } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverPaths } from "../src/config/server-paths.js";
import { openConsoleStoreOn } from "../src/server/console/store.js";
import { resolveStoreBackend } from "../src/server/store/backend.js";
import { sha256Hex } from "../src/shared/tokens.js";
import { initRoot, runIvoai, tempDir } from "./helpers.js";

interface RevokedEvent {
  kind: string;
  actor: string;
  detail: { target: string; id: string; name: string; role: string; actor_id: string };
}

describe("ivoai server console revoke (audited)", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir("ivoai-console-revoke-"));
    await initRoot(root);
  });
  afterAll(async () => {
    await cleanup?.();
  });

  /** Signed-in sessions opened straight in the tree's console store (no server needed to revoke them). */
  const openSessions = async (...people: [name: string, role: "viewer" | "admin"][]) => {
    const paths = serverPaths(root);
    const store = await openConsoleStoreOn(await resolveStoreBackend(paths), paths);
    try {
      const opened = [];
      for (const [name, role] of people) {
        const now = new Date();
        const { code } = await store.createCode({ role, name, ttlMs: 60_000, now });
        const session = await store.exchangeCode(code, now, 3_600_000);
        if (!session) throw new Error(`no session for ${name}`);
        opened.push(session);
      }
      return opened;
    } finally {
      await store.close();
    }
  };

  it("records one client_revoked event per revoked session, by the operator, without token or hash", async () => {
    const [rui, ana, bo] = await openSessions(["Rui", "viewer"], ["Ana", "admin"], ["Bo", "viewer"]);
    if (!rui || !ana || !bo) throw new Error("sessions not opened");
    const one = await runIvoai(["server", "console", "revoke", rui.session.id, "--root", root, "--json"]);
    expect(one.code, one.stderr).toBe(0);
    const all = await runIvoai(["server", "console", "revoke", "--all", "--root", root, "--json"]);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ revoked: 2 });

    const listed = await runIvoai(["server", "audit", "--root", root, "--kind", "client_revoked", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const { events } = JSON.parse(listed.stdout) as { events: RevokedEvent[] };
    const operator = `operator:${userInfo().username}`;
    const detail = (session: typeof rui) => ({
      target: "console_session",
      id: session.session.id,
      name: session.session.name,
      role: session.session.role,
      actor_id: operator,
    });
    expect(events[0]).toMatchObject({ kind: "client_revoked", actor: operator, detail: detail(rui) });
    // --all: each session it ended, in no promised order.
    expect(events.slice(1).map((event) => event.detail)).toEqual(
      expect.arrayContaining([detail(ana), detail(bo)]),
    );
    expect(events).toHaveLength(3);
    for (const { token } of [rui, ana, bo]) {
      expect(listed.stdout).not.toContain(token);
      expect(listed.stdout).not.toContain(sha256Hex(token));
    }
  });
});
