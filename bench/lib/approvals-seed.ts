// Files many pending approval requests straight into a server tree's memory store (as many agents would, past
// the per-credential cap), for the console's budgets and screenshots.
import { loadServerConfig } from "../../src/config/server-config.js";
import { serverPaths } from "../../src/config/server-paths.js";
import { openMemoryService } from "../../src/server/memory/service.js";
import { silentLogger } from "../../src/shared/logger.js";

export async function seedPendingApprovals(root: string, count: number): Promise<void> {
  const paths = serverPaths(root);
  const memory = openMemoryService({ paths, config: await loadServerConfig(paths.configFile), logger: silentLogger });
  try {
    const base = Date.now();
    for (let index = 0; index < count; index++) {
      const at = new Date(base - (count - index) * 1000);
      const pagePath = `notes/agent-${index % 97}/finding-${index}`;
      const body = `# Finding ${index}\n\nThe billing queue retries ${index % 7} times before it parks a message.`;
      await memory.store.createApproval({
        id: `apr_bench${String(index).padStart(6, "0")}`,
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + 7 * 86_400_000).toISOString(),
        status: "pending",
        tool: "memory_write_page",
        action: "write_page",
        scope: `git:acme/service-${index % 13}`,
        path: pagePath,
        requester: `cli_agent${index % 41}`,
        session_id: `sess-${index % 211}`,
        summary: `Write page ${pagePath}: Finding ${index}`,
        diff: body
          .split("\n")
          .map((line) => `+ ${line}`)
          .join("\n"),
        payload: {},
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
