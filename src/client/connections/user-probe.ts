// `ivoai mcp test` and doctor's user-mcp rows: initialize and tools/list against one user MCP server, bounded,
// saying which tools agents get, which the allow-list hides and which it names but the server lacks.
import { withTimeout } from "../../shared/timeout.js";
import { timedOutAfter } from "../components/probe.js";
import { connectUserServer } from "./user-client.js";
import { exposedToolName, type ResolvedUserServer, toolAllowed } from "./user-servers.js";

export interface UserProbe {
  ok: boolean;
  /** The tools agents see, by the names they see (prefix applied). */
  tools: string[];
  /** Listed by the server, hidden by the allow-list. */
  hidden: string[];
  /** Allow-listed, not listed by the server. */
  missing: string[];
  ms: number;
  error?: string;
}

export async function probeUserServer(
  server: ResolvedUserServer,
  options: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string },
): Promise<UserProbe> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let client: Awaited<ReturnType<typeof connectUserServer>> | undefined;
  const attempt = (async () => {
    client = await connectUserServer(server, options);
    return (await client.listTools(undefined, { timeout: options.timeoutMs })).tools.map((tool) => tool.name);
  })();
  try {
    const listed = await withTimeout(attempt, options.timeoutMs, timedOutAfter(options.timeoutMs));
    return {
      ok: true,
      tools: listed.filter((name) => toolAllowed(server, name)).map((name) => exposedToolName(server, name)),
      hidden: listed.filter((name) => !toolAllowed(server, name)),
      missing: (server.tools ?? []).filter((name) => !listed.includes(name)),
      ms: elapsed(),
    };
  } catch (error) {
    return { ok: false, tools: [], hidden: [], missing: [], ms: elapsed(), error: oneLineError(error) };
  } finally {
    // A connection still being made when the deadline passed is closed once it is up.
    void attempt.catch(() => undefined).finally(() => client?.close().catch(() => undefined));
  }
}

function oneLineError(error: unknown): string {
  return ((error as Error).message ?? String(error)).split("\n")[0]?.slice(0, 300) ?? "failed";
}
