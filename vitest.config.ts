// Three projects, by what a test needs (docs/CONTRIBUTING.md):
//   unit      no PostgreSQL, no build: `npx vitest run --project unit path` answers in seconds;
//   contract  a real PostgreSQL (the store contracts run on both backends), no build;
//   e2e       the built single-file binary (test/setup/build.ts builds it once) and PostgreSQL.
// `npm test` runs all three. A file's name says its project: *.contract.test.ts (PostgreSQL), *.e2e.test.ts
// (the build), anything else unit.
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // Set-up hooks start several real servers and CLIs; on 2 loaded cores that took over a minute once.
    hookTimeout: 180_000,
    pool: "forks",
    // Two files at once even on 2 cores: most of a file's time is spent waiting on the servers and CLIs it starts
    // (Vitest's default there is one). Tests bound CPU time, never the wall clock, so sharing cores is safe.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "web/src/**/*.test.{ts,tsx}", "scripts/**/*.test.ts"],
          exclude: ["**/*.contract.test.ts", "**/*.e2e.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "contract",
          include: ["src/**/*.contract.test.ts"],
          globalSetup: ["test/setup/postgres.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts", "src/**/*.e2e.test.ts"],
          globalSetup: ["test/setup/postgres.ts", "test/setup/build.ts"],
        },
      },
    ],
  },
});
