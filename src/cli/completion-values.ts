// The run-time values completion offers (server aliases, knowledge sources, pending approval ids, the user's own
// MCP servers), printed for the completion scripts by `ivoai completion SHELL --values KIND`. Read-only and
// quick; never a credential (config.toml only, never secrets.json); any problem completes nothing rather than
// print an error mid-line.
import { promises as fs } from "node:fs";
import { parseClientConfig } from "../config/client-config.js";
import { clientPaths } from "../config/client-paths.js";
import { resolveServerRoot, serverPaths } from "../config/server-paths.js";
import { pendingApprovals } from "../server/approvals/pending-approvals.js";
import type { DynamicValueKind } from "./command.js";
import type { Shell } from "./completion.js";

/** One value and what it is (shown by zsh and fish). */
export interface CompletionValue {
  value: string;
  description: string;
}

/** Where the values come from. */
export interface CompletionValuesOptions {
  env: NodeJS.ProcessEnv;
  /** The server tree root typed on the command line (--root), for approval ids. */
  root?: string | undefined;
  now?: Date;
}

async function clientConfig(env: NodeJS.ProcessEnv) {
  const file = clientPaths(env).configFile;
  return parseClientConfig(await fs.readFile(file, "utf8"), file);
}

async function valuesOf(
  kind: DynamicValueKind,
  options: CompletionValuesOptions,
): Promise<CompletionValue[]> {
  if (kind === "approval-id") {
    const paths = serverPaths(resolveServerRoot(options.root, options.env));
    return (await pendingApprovals(paths, options.now ?? new Date())).map((row) => ({
      value: row.id,
      description: `pending ${row.tool} since ${row.created_at}`,
    }));
  }
  const config = await clientConfig(options.env);
  if (kind === "mcp-server")
    return config.userServers.map((server) => ({
      value: server.name,
      description: `your MCP server (${server.transport})${server.enabled === false ? ", disabled" : ""}`,
    }));
  const profiles = config.profiles;
  const aliases = profiles.map((profile) => ({
    value: profile.alias,
    description: `server (purpose ${profile.purpose})${profile.enabled ? "" : ", disabled"}`,
  }));
  if (kind === "server-alias") return aliases;
  const groups = profiles.flatMap((profile) => [
    { value: profile.purpose, description: "purpose" },
    ...(profile.redundancy_group
      ? [{ value: profile.redundancy_group, description: "redundancy group" }]
      : []),
  ]);
  return [...aliases, ...groups];
}

/** A value a shell can take as one word, printed as is: no space, quote, glob or control character. */
const SAFE_VALUE = /^[A-Za-z0-9._@%+=,:/-]{1,200}$/;
const printable = (text: string) => text.replace(/[^\x20-\x7e]/g, "?").slice(0, 120);

/** The values of `kind`, one per line as `shell` reads them; empty when anything fails. */
export async function completionValues(
  kind: DynamicValueKind,
  shell: Shell,
  options: CompletionValuesOptions,
): Promise<string> {
  let values: CompletionValue[];
  try {
    values = await valuesOf(kind, options);
  } catch {
    return ""; // no config, no server tree, a locked or foreign database: nothing to offer
  }
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const { value, description } of values) {
    if (!SAFE_VALUE.test(value) || seen.has(value)) continue;
    seen.add(value);
    if (shell === "bash") lines.push(value);
    else if (shell === "zsh") lines.push(`${value.replace(/:/g, "\\:")}:${printable(description)}`);
    else lines.push(`${value}\t${printable(description)}`);
  }
  return lines.map((line) => `${line}\n`).join("");
}
