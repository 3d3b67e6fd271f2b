import { describe, expect, it } from "vitest";
import rufloPackage from "../../../manifest/locks/ruflo/package.json" with { type: "json" };
import rufloLock from "../../../manifest/locks/ruflo/package-lock.json" with { type: "json" };
import { RUFLO_PIN } from "../auto/ruflo.js";
import { COMPILED_CATALOGUE, lockedEntry } from "./catalogue.js";
import { checkLockPin, lockedBinTarget, lockFiles } from "./locked.js";

const packages = rufloLock.packages as Record<
  string,
  { version?: string; optionalDependencies?: Record<string, string> }
>;

describe("ruflo's compiled lock", () => {
  const entry = lockedEntry(COMPILED_CATALOGUE, "ruflo");

  it("pins the reviewed ruflo and the inner CLI admission checks, exactly", async () => {
    expect(entry).toMatchObject({ package: "ruflo", version: RUFLO_PIN.version, bins: ["ruflo"] });
    expect(rufloPackage.dependencies).toEqual({
      ruflo: RUFLO_PIN.version,
      [RUFLO_PIN.cliPackage]: RUFLO_PIN.cliVersion,
    });
    expect(packages[`node_modules/${RUFLO_PIN.cliPackage}`]?.version).toBe(RUFLO_PIN.cliVersion);
    expect(packages[""]).toMatchObject({ dependencies: rufloPackage.dependencies });
    const files = await lockFiles("ruflo");
    expect(files.packageJson).toEqual(rufloPackage);
    expect(() => checkLockPin(entry, files)).not.toThrow();
  });

  it("refuses a catalogue pin the lock does not hold, before anything is installed", async () => {
    const files = await lockFiles("ruflo");
    const other = { ...entry, integrity: `sha512-${"A".repeat(86)}==` };
    expect(() => checkLockPin(other, files)).toThrow(
      /integrity check failed for ruflo@3\.38\.12: .*nothing was installed/,
    );
    expect(() => checkLockPin({ ...entry, version: "3.38.13" }, files)).toThrow(
      /the compiled lock has 3\.38\.12/,
    );
  });

  it("names no optional dependency it has no entry for (npm ci refuses such a lock)", () => {
    const present = new Set(Object.keys(packages).map((key) => key.split("node_modules/").at(-1)));
    const dangling = Object.values(packages).flatMap((item) =>
      Object.keys(item.optionalDependencies ?? {}).filter((dep) => !present.has(dep)),
    );
    expect(Object.keys(packages).length).toBeGreaterThan(100);
    expect(dangling).toEqual([]);
  });

  it("links its bin from its own folder of the generation", () => {
    expect(lockedBinTarget("ruflo", "ruflo")).toBe("ruflo/node_modules/.bin/ruflo");
  });
});
