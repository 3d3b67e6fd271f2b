import { homedir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { clientPaths } from "./client-paths.js";

describe("client paths", () => {
  it("never resolves against the working directory when HOME is empty or relative", () => {
    for (const HOME of ["", "relative/home", "."]) {
      let paths: ReturnType<typeof clientPaths> | undefined;
      try {
        paths = clientPaths({ HOME });
      } catch (error) {
        expect((error as Error).message).toMatch(/HOME is not an absolute path/);
        continue;
      }
      for (const dir of Object.values(paths)) expect(path.isAbsolute(dir), dir).toBe(true);
      expect(paths.configDir).toBe(path.join(homedir(), ".config", "ivoai"));
    }
  });

  it("uses absolute XDG roots and an absolute HOME as given", () => {
    expect(clientPaths({ HOME: "/h", XDG_DATA_HOME: "/d", XDG_CONFIG_HOME: "rel" })).toMatchObject({
      configDir: "/h/.config/ivoai",
      dataDir: "/d/ivoai",
      cacheDir: "/h/.cache/ivoai",
    });
  });
});
