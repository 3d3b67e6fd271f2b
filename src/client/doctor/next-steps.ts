// What to do about each row `ivoai doctor` finds missing or unhealthy: one next step per row (null when the
// row is fine), and the report's list of them, so that a newcomer's first doctor says where to start.
import type { ComponentRow, FileRow, ServerRow } from "./doctor.js";

/** How to connect a first server (the code comes from the server's admin, never from argv). */
export const CONNECT_FIRST_SERVER =
  "connect a knowledge server: ask its admin for an enrollment code ('ivoai server enrollment create' on the " +
  "server), then: ivoai connect server add ALIAS --url URL --purpose NAME --code-stdin (or try it all locally " +
  "first: ivoai demo)";

const LOGIN_COMMAND: Record<string, string> = {
  codex: "ivoai connect chatgpt",
  claude: "ivoai connect claude",
};

/** The next step for a component row, or null when there is nothing to do. */
export function componentNext(row: ComponentRow): string | null {
  if (row.component === "native-sqlite")
    return row.healthy === "no" ? "npm rebuild better-sqlite3 where ivoai is installed (see DETAIL)" : null;
  if (row.installed === "no") return `ivoai setup --agents ${row.component}`;
  if (row.available === "no")
    return `run '${row.path ?? row.component} --version' to see why it does not start`;
  if (row.logged_in === "logged_out") return LOGIN_COMMAND[row.component] ?? null;
  return null;
}

/** The next step for a client file whose mode or type is wrong. */
export function fileNext(row: FileRow): string | null {
  if (row.ok) return null;
  if (row.actual === "symlink") return `replace the symlink ${row.path} with a regular file`;
  if (row.actual === "absent") return null;
  return `chmod ${row.expected} ${row.path}`;
}

/** The next step for a server profile (its URL is not a secret; its credential is never named). */
export function serverNext(row: ServerRow, url: string): string | null {
  if (!row.enabled) return null; // left out on purpose: 'ivoai connect server enable' brings it back
  if (!row.credential_stored)
    return (
      `ivoai disconnect server ${row.alias}, then connect it again with a new enrollment code: ` +
      `ivoai connect server add ${row.alias} --url ${url} --purpose ${row.purpose} --code-stdin`
    );
  if (row.tls === "invalid" && /answered plain HTTP, not TLS/.test(row.detail))
    return `${row.detail}; a profile's URL changes with 'ivoai disconnect server ${row.alias}' and connecting it again`;
  if (row.tls === "invalid")
    return `the TLS certificate of ${url} is not valid: ask the server's admin to fix it, then: ivoai connect server test ${row.alias}`;
  if (row.reachable === "no")
    return `check that the server at ${url} is running and reachable from here, then: ivoai connect server test ${row.alias}`;
  if (row.readiness !== "ready")
    return `ivoai connect server test ${row.alias} shows what is degraded or not ready; its admin can run 'ivoai server status'`;
  return null;
}

/** The report's next steps, each naming its row: missing agents become one `ivoai setup` (of all `agents`). */
export function reportNext(
  agents: readonly string[],
  components: readonly (ComponentRow & { next: string | null })[],
  files: readonly (FileRow & { next: string | null })[],
  servers: readonly (ServerRow & { next: string | null })[],
): string[] {
  const missing = components
    .filter((row) => row.installed === "no" && agents.includes(row.component))
    .map((row) => row.component);
  const steps: string[] = [];
  if (missing.length > 0)
    steps.push(
      `install the agent CLIs (${missing.join(", ")} not found): ivoai setup${
        missing.length < agents.length ? ` --agents ${missing.join(",")}` : ""
      }`,
    );
  for (const row of components)
    if (row.next && row.installed !== "no") steps.push(`${row.component}: ${row.next}`);
  for (const row of files) if (row.next) steps.push(`${row.path}: ${row.next}`);
  for (const row of servers) if (row.next) steps.push(`server ${row.alias}: ${row.next}`);
  if (servers.length === 0) steps.push(CONNECT_FIRST_SERVER);
  return steps;
}

/** Next steps of the matrix rows that no component, file or server row covers. */
export const MATRIX_NEXT = {
  compression: (provider: string, managedBin: string, missing: boolean): string =>
    missing
      ? `optional: ${provider} runs from ${managedBin}/${provider}${provider === "headroom" ? " (it installs from PyPI)" : ""}; without it --compression ${provider} runs direct`
      : `run '${managedBin}/${provider} --version' to see why its preflight fails; until then --compression ${provider} runs direct`,
  coordinator:
    "'ivoai setup --with ruflo' installs the reviewed Ruflo (or put ruflo 3.38.12 on PATH), or set [auto] " +
    'coordinator = "none" in config.toml; AUTO refuses to start until then',
  coordinatorOptional:
    "optional: 'ivoai setup --with ruflo' installs the reviewed Ruflo for AUTO's admission",
  skills: "reinstall ivoai (its package ships skills/ivoai-memory-context), or in a checkout: npm run skills",
  userServer: (name: string): string =>
    `ivoai mcp test ${name} shows what fails; ivoai mcp disable ${name} leaves it out`,
} as const;
