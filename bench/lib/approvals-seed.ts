// Files many pending approval requests straight into a server tree's memory store (as many agents would, past
// the per-credential cap), for the console's budgets and screenshots.
import { serverPaths } from "../../src/config/server-paths.js";
import { memoryFile } from "../../src/server/memory/service.js";
import { openMemoryStore } from "../../src/server/memory/store.js";

/** `count` pending write requests, the newest created `now`, one second apart. */
export async function seedPendingApprovals(root: string, count: number, now = Date.now()): Promise<void> {
  const memory = openMemoryStore(memoryFile(serverPaths(root)));
  try {
    for (let index = 0; index < count; index++) {
      const at = new Date(now - index * 1000);
      const pagePath = `notes/service-${index % 13}/finding-${index}`;
      const body = `# Finding ${index}\n\nThe billing queue retries ${index % 7} times before it parks a message.\n`;
      await memory.createApproval({
        id: `apr_bench${String(index).padStart(6, "0")}`,
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + 7 * 86_400_000).toISOString(),
        status: "pending",
        tool: "memory_write_page",
        action: "write_page",
        scope: index % 3 === 0 ? "_global" : `git:acme/service-${index % 13}`,
        path: pagePath,
        requester: `cli_agent${index % 41}`,
        session_id: `sess-${index % 211}`,
        summary: `Create ${pagePath}: Finding ${index}`,
        diff: `${body.repeat(20).replace(/^/gm, "+ ")}`,
        payload: { body: body.repeat(20) },
        base_version: 0,
        decided_by: null,
        decided_at: null,
        reason: null,
      });
    }
  } finally {
    memory.close();
  }
}
