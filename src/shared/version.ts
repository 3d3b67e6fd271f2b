// The running build's version: injected by the bundler, read from package.json when run from source.
import { readFileSync } from "node:fs";

declare const __IVOAI_VERSION__: string | undefined;

function fromPackageJson(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

export const IVOAI_VERSION: string =
  typeof __IVOAI_VERSION__ === "string" ? __IVOAI_VERSION__ : fromPackageJson();
