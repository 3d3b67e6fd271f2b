// Files many pending approval requests straight into a server tree's memory store (as many agents would, past
// the per-credential cap), for the console's budgets and screenshots and the approve-throughput bench: each is
// a page creation filed as memory_write_page files it, so approving it applies a real page.
import { serverPaths } from "../../src/config/server-paths.js";
import { lineDiff } from "../../src/server/memory/diff.js";
import { memoryFile } from "../../src/server/memory/service.js";
import { openMemoryStore } from "../../src/server/memory/store.js";

/** `count` pending write requests (numbered from `first`), the newest created `now`, one second apart. */
export async function seedPendingApprovals(
  root: string,
  count: number,
  now = Date.now(),
  first = 0,
): Promise<void> {
  const memory = await openMemoryStore(memoryFile(serverPaths(root)));
  try {
    for (let index = first; index < first + count; index++) {
      const at = new Date(now - (index - first) * 1000);
      const pagePath = `notes/service-${index % 13}/finding-${index}`;
      const body =
        `# Finding ${index}\n\nThe billing queue retries ${index % 7} times before it parks a message.\n`.repeat(
          20,
        );
      const scope = index % 3 === 0 ? "_global" : `git:acme/service-${index % 13}`;
      const requester = `cli_agent${index % 41}`;
      await memory.createApproval({
        id: `apr_bench${String(index).padStart(6, "0")}`,
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + 7 * 86_400_000).toISOString(),
        status: "pending",
        tool: "memory_write_page",
        action: "write_page",
        scope,
        path: pagePath,
        requester,
        session_id: `sess-${index % 211}`,
        summary: `Create ${pagePath}: Finding ${index}`,
        diff: lineDiff("", body),
        payload: { scope, path: pagePath, body, author: requester },
        base_version: 0,
        decided_by: null,
        decided_at: null,
        reason: null,
      });
    }
  } finally {
    await memory.close();
  }
}
