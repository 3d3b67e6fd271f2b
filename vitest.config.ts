// Three projects, by what a test needs (docs/CONTRIBUTING.md):
//   unit      no PostgreSQL, no build: `npx vitest run --project unit path` answers in seconds;
//   contract  a real PostgreSQL (the store contracts run on both backends), no build;
//   e2e       the built single-file binary (test/setup/build.ts builds it once) and PostgreSQL.
// `npm test` runs all three. A file's name says its project: *.contract.test.ts and *.e2e.test.ts; the few
// older unit-named files that need more are listed here until they are renamed.
import { defineConfig } from "vitest/config";

/** Unit-named files that need PostgreSQL. */
const NEEDS_POSTGRES = [
  "src/server/start.test.ts",
  "src/server/store/copy.test.ts",
  "src/server/store/sql.test.ts",
  "src/server/memory/store-postgres.test.ts",
];
/** Unit-named files that run the built binary (dist/ivoai.mjs). */
const NEEDS_BUILD = [
  "src/server/deploy/trusted-exec.test.ts",
  "src/server/context/prepare-pool.test.ts",
  "src/client/frontend/engine.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // Set-up hooks start several real servers and CLIs; on 2 loaded cores that took over a minute once.
    hookTimeout: 180_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "web/src/**/*.test.{ts,tsx}", "scripts/**/*.test.ts"],
          exclude: ["**/*.contract.test.ts", "**/*.e2e.test.ts", ...NEEDS_POSTGRES, ...NEEDS_BUILD],
        },
      },
      {
        extends: true,
        test: {
          name: "contract",
          include: ["src/**/*.contract.test.ts", ...NEEDS_POSTGRES],
          globalSetup: ["test/setup/postgres.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts", "src/**/*.e2e.test.ts", ...NEEDS_BUILD],
          globalSetup: ["test/setup/postgres.ts", "test/setup/build.ts"],
        },
      },
    ],
  },
});
