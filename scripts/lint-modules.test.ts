import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without types (run by `npm run lint`).
import { checkModules } from "./lint-modules.mjs";

function check(tree: Record<string, string>): string[] {
  return checkModules(Object.keys(tree), (file: string) => tree[file]);
}

describe("lint-modules", () => {
  it("keeps the store layer from importing a domain, and the client from the server", () => {
    const problems = check({
      "src/server/store/registry.ts": 'import { MEMORY_MIGRATIONS } from "../memory/schema.js";',
      "src/server/store/backend.ts": 'import { loadServerConfig } from "../../config/server-config.js";',
      "src/server/memory/schema.ts": 'import { migrate } from "../store/migrations.js";',
      "src/client/router/router.ts": 'import type { X } from "../../server/mcp/endpoint.js";',
      "src/shared/errors.ts": 'export * from "../protocol/tools.js";',
    });
    expect(problems).toEqual([
      "src/server/store/registry.ts: imports src/server/memory/schema.ts: src/server/store/ may import only src/shared/, src/config/",
      "src/client/router/router.ts: imports src/server/mcp/endpoint.ts: src/client/ may not import src/server/mcp/endpoint.ts",
      "src/shared/errors.ts: imports src/protocol/tools.ts: src/shared/ may import only itself",
    ]);
  });

  it("sends outsiders through a folder's door, lets tests reach in, and reports a door nobody uses", () => {
    const problems = check({
      "src/server/backup/index.ts": 'export { createBackup } from "./create.js";',
      "src/server/backup/create.ts": "export function createBackup() {}",
      "src/cli/commands/server-backup.ts": 'import { createBackup } from "../../server/backup/create.js";',
      "src/server/backup/create.test.ts": 'import { createBackup } from "./create.js";',
      "test/backup.e2e.test.ts": 'import { createBackup } from "../src/server/backup/create.js";',
    });
    expect(problems).toEqual([
      "src/cli/commands/server-backup.ts: imports src/server/backup/create.ts past its door: import src/server/backup/index.js",
      "src/server/backup/index.ts: a door nobody outside src/server/backup/ imports: use it or remove it",
    ]);
    expect(
      check({
        "src/server/backup/index.ts": 'export { createBackup } from "./create.js";',
        "src/server/backup/create.ts": "export function createBackup() {}",
        "src/cli/commands/server-backup.ts":
          'const { createBackup } = await import("../../server/backup/index.js");',
      }),
    ).toEqual([]);
  });
});
