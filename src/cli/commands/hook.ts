// `ivoai hook claude|codex|statusline …`: what agents call on every lifecycle event and status-line refresh.
// Kept apart from the agent commands so an event loads only this, the hook client (with the router's forwarder)
// and stdin: no agent launcher, rest of the router or server code; the status line's quota store is loaded only
// for that hook.
import { codexNotifyEvent, isHookEvent, sendHook, summarizePayload } from "../../client/agents/hook.js";
import { clientPaths } from "../../config/client-paths.js";
import { defineCommand } from "../command.js";
import { readStdin } from "../secret-input.js";

/** Standard input as the agent wrote it, or `fallback` when nothing arrives within a second. */
function stdinOr<T>(parse: (text: string) => T, fallback: T): Promise<T> {
  return Promise.race([
    readStdin(256 * 1024, "a hook payload").then(parse),
    new Promise<T>((resolve) => setTimeout(() => resolve(fallback), 1_000).unref()),
  ]);
}

export const hookCommand = defineCommand({
  name: "hook",
  summary: "Internal: lifecycle hook called by agents in ivoai sessions (always exits 0)",
  positionals: [
    {
      name: "AGENT",
      description: "claude, codex, or statusline (Claude's status line: quota for AUTO)",
      required: true,
    },
    {
      name: "EVENT",
      description:
        "for claude: session_start, prompt_submitted, tool_used or session_end; codex passes its JSON",
      variadic: true,
    },
  ],
  async run(ctx) {
    try {
      const [agent, first] = ctx.positionals;
      if (agent === "statusline") {
        const payload = await stdinOr((text) => text, "").catch(() => "");
        const { recordStatusline } = await import("../../client/auto/quota/statusline-hook.js");
        ctx.out.line(await recordStatusline(payload, clientPaths(ctx.env).stateDir));
      } else if (agent === "claude") {
        const event = first;
        if (!isHookEvent(event)) return 0;
        const payload = await stdinOr(
          (text) => (text ? (JSON.parse(text) as Record<string, unknown>) : {}),
          {} as Record<string, unknown>,
        );
        await sendHook(ctx.env, event, summarizePayload(event, payload));
      } else if (agent === "codex") {
        const { event, data } = codexNotifyEvent(
          JSON.parse(ctx.positionals.at(-1) ?? "{}") as Record<string, unknown>,
        );
        await sendHook(ctx.env, event, data);
      }
    } catch {
      // Never fatal: the agent continues whatever the hook met.
    }
    return 0;
  },
});
