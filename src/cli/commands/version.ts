// `ivoai version`: this build's version and the runtime it runs on (what a bug report needs).
import { IVOAI_VERSION } from "../../shared/version.js";
import { defineCommand } from "../command.js";

/** The version report: ivoai, Node, platform and the native module ABI that better-sqlite3 must match. */
export function versionReport() {
  return {
    version: IVOAI_VERSION,
    node: process.versions.node,
    node_abi: process.versions.modules,
    platform: process.platform,
    arch: process.arch,
  };
}

export const versionCommand = defineCommand({
  name: "version",
  summary: "Print ivoai's version, the Node version, platform and native module ABI",
  description: "'ivoai --version' (or -v, -V) prints the version alone.",
  json: true,
  async run(ctx) {
    ctx.out.data(versionReport(), (v) =>
      [
        `ivoai ${v.version}`,
        `node ${v.node} (native module ABI ${v.node_abi})`,
        `platform ${v.platform}-${v.arch}`,
      ].join("\n"),
    );
    return 0;
  },
});
