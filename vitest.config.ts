import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "web/src/**/*.test.{ts,tsx}"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    // Set-up hooks start several real servers and CLIs; on 2 loaded cores that took over a minute once.
    hookTimeout: 180_000,
    pool: "forks",
  },
});
