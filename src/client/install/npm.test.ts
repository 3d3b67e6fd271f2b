import path from "node:path";
import { describe, expect, it } from "vitest";
import { globalNpmrc, minimalNpmEnv } from "./npm.js";

describe("npm environment", () => {
  it("points npm's user and global config at ivoai's private npm home, whatever the caller set", () => {
    const env = minimalNpmEnv(
      {
        PATH: "/usr/bin",
        npm_config_globalconfig: "/etc/npmrc-with-token",
        npm_config_userconfig: "/root/.npmrc",
        NPM_CONFIG_GLOBALCONFIG: "/etc/other",
      },
      "/priv/npm-home",
    );
    expect(env.npm_config_globalconfig).toBe(globalNpmrc("/priv/npm-home"));
    expect(path.dirname(env.npm_config_globalconfig ?? "")).toBe("/priv/npm-home");
    expect(env.npm_config_userconfig).toBe("/priv/npm-home/.npmrc");
    expect(env.NPM_CONFIG_GLOBALCONFIG).toBeUndefined();
  });
});
