import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readAutoSettings } from "./settings.js";

describe("[auto] settings", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const withConfig = async (text: string) => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-auto-settings-"));
    const file = path.join(dir, "config.toml");
    await writeFile(file, text);
    return readAutoSettings(file);
  };

  it("has the issue's defaults when the table or the file is missing", async () => {
    expect(await readAutoSettings("/nonexistent/ivoai/config.toml")).toMatchObject({
      planner: "codex",
      workers: 2,
      quota_headroom_percent: 10,
      coordinator: "auto",
    });
    expect(await withConfig('[servers.x]\nalias = "x"\n')).toMatchObject({ workers: 2 });
  });

  it("reads the table", async () => {
    const settings = await withConfig('[auto]\nplanner = "claude"\nworkers = 3\ncoordinator = "ruflo"\n');
    expect(settings).toMatchObject({ planner: "claude", workers: 3, coordinator: "ruflo" });
  });

  it("refuses what it does not know, past the hard cap, or of the wrong type, naming the key", async () => {
    await expect(withConfig("[auto]\nworkers = 4\n")).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringMatching(/\[auto\] workers/),
    });
    await expect(withConfig('[auto]\ncoordinator = "claude-flow"\n')).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringMatching(/\[auto\] coordinator/),
    });
    await expect(withConfig("[auto]\nplaner = 'codex'\n")).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await expect(withConfig("auto = 'ruflo'\n")).rejects.toMatchObject({ code: "CONFIG_INVALID" });
  });
});
