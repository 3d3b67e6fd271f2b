// An acknowledged approve survives the server process dying right after it (WAL, synchronous=NORMAL: the
// commit reached the operating system before the response was sent), and is applied exactly once; so does its
// audit record.

import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverPaths } from "../src/config/server-paths.js";
import { openAuditLog } from "../src/server/audit/store.js";
import { memoryFile } from "../src/server/memory/service.js";
import { openMemoryStore } from "../src/server/memory/store.js";
import { openSqliteSql } from "../src/server/store/sqlite.js";
import { connectMcp, enrolledCredential, initRoot, startServer, tempDir } from "./helpers.js";

describe("approval durability", () => {
  let root: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
  });
  afterAll(async () => {
    await cleanup();
  });

  it("keeps every acknowledged approve after the server is killed (SIGKILL) right after the responses", async () => {
    const server = await startServer(root);
    const agent = await connectMcp(
      `${server.url}/v1/memory/mcp`,
      await enrolledCredential(server.url, root),
      {
        "x-ivoai-session-id": "sess-d",
        "x-ivoai-project": "git:acme/api",
      },
    );
    const approver = await enrolledCredential(server.url, root, "approvals:read,approvals:decide");
    const ids: string[] = [];
    for (let index = 0; index < 20; index++) {
      const result = await agent.callTool({
        name: "memory_write_page",
        arguments: { path: `durable/page-${index}`, body: `# Page ${index}\n\nKept after a crash.` },
      });
      ids.push((result.structuredContent as { data: { approval_id: string } }).data.approval_id);
    }
    await agent.close();
    const statuses = await Promise.all(
      ids.map(
        async (id) =>
          (
            await fetch(`${server.url}/v1/approvals/${id}/approve`, {
              method: "POST",
              headers: { authorization: `Bearer ${approver}`, "content-type": "application/json" },
              body: "{}",
            })
          ).status,
      ),
    );
    expect(statuses).toEqual(ids.map(() => 200));
    expect((await server.stop("SIGKILL")).signal).toBe("SIGKILL");

    const store = await openMemoryStore(memoryFile(serverPaths(root)));
    try {
      for (const [index, id] of ids.entries()) {
        expect((await store.getApproval(id))?.status).toBe("applied");
        const versions = await store.pageVersions("git:acme/api", `durable/page-${index}`);
        expect(versions.map((version) => version.version)).toEqual([1]);
      }
    } finally {
      await store.close();
    }
    // Each decision's audit record was durable before its 200, like the decision itself.
    const audit = await openAuditLog(openSqliteSql(path.join(serverPaths(root).auditDir, "audit.sqlite")));
    try {
      const decided = await audit.list({ kind: "approval_decision", limit: 100 });
      expect(
        decided.map((event) => (event.kind === "tool_call" ? "" : event.detail.approval_id)).sort(),
      ).toEqual([...ids].sort());
    } finally {
      await audit.close();
    }
  });
});
