// The AUTO engine behind the OpenCode bridge: each frontend turn is one AUTO session that continues the
// frontend conversation's official CLI conversations (from the session mapping) and streams its answer.
import { oneLine } from "../../shared/terminal-text.js";
import type { AutoEvent } from "../auto/events.js";
import { CANCELLED, runAuto } from "../auto/supervisor.js";
import type { ConnectionRegistry } from "../connections/registry.js";
import type { Usage } from "../session/auto-state.js";
import type { FrontendEngine, FrontendUsage } from "./contracts.js";
import { openSessionMap } from "./session-map.js";

export interface AutoFrontendOptions {
  registry: ConnectionRegistry;
  env: NodeJS.ProcessEnv;
  cwd: string;
  selfCommand: string[];
  /** The session's knowledge selection, kept for every turn (and part of the mapping's key). */
  knowledgeSources: readonly string[];
  notice(message: string): void;
  /** Every event of each turn's AUTO session (the TUI's progress). */
  onProgress?: (event: AutoEvent) => void;
  killAfterMs?: number;
}

export function createAutoFrontendEngine(options: AutoFrontendOptions): FrontendEngine {
  const map = openSessionMap(options.registry.paths.stateDir);
  const scope = [...options.knowledgeSources].sort();
  return {
    async turn(turn) {
      const key = { frontendSession: turn.frontendSession ?? "default", cwd: options.cwd, scope };
      const previous = await map.get(key);
      let streamed = "";
      const stream = (text: string) => {
        const delta = streamed && !streamed.endsWith("\n") ? `\n\n${text}` : text;
        streamed += delta;
        turn.onText(delta);
      };
      const explicit =
        turn.selection.kind === "explicit"
          ? {
              executor: turn.selection.executor,
              model: turn.selection.model,
              effort: turn.effort ?? turn.selection.effort,
            }
          : undefined;
      try {
        const result = await runAuto({
          task: turn.prompt,
          knowledgeSources: options.knowledgeSources,
          registry: options.registry,
          env: options.env,
          cwd: options.cwd,
          selfCommand: options.selfCommand,
          notice: options.notice,
          signal: cancelledBy(turn.signal),
          onAnswerText: stream,
          ...(options.onProgress ? { onProgress: options.onProgress } : {}),
          ...(options.killAfterMs !== undefined ? { killAfterMs: options.killAfterMs } : {}),
          ...(explicit ? { explicit } : {}),
          ...(previous?.primary
            ? { conversation: { threads: previous.threads, primary: previous.primary } }
            : {}),
        });
        const state = result.state;
        await map.put(key, {
          ivoai_session_id: result.sessionId,
          threads: state?.threads ?? previous?.threads ?? { codex: null, claude: null },
          primary: state?.primary ?? previous?.primary ?? null,
          selection: {
            requested: turn.selection.kind === "auto" ? "auto" : turn.selection.id,
            effective: explicit ? (turn.selection as { id: string }).id : (state?.primary ?? null),
          },
        });
        const usage = state && state.usage.turns > 0 ? turnUsage(state.usage) : undefined;
        if (result.exitCode === 0) {
          if (!streamed && result.answer) stream(result.answer);
          return { finish: "stop", text: streamed, error: null, ...(usage ? { usage } : {}) };
        }
        return {
          finish: "error",
          text: streamed,
          error: state?.error ?? `ivoai auto ended with status ${result.exitCode}`,
        };
      } catch (error) {
        return { finish: "error", text: streamed, error: oneLine((error as Error).message).slice(0, 300) };
      }
    },
  };
}

/**
 * OpenCode ends a turn's request when the person presses Esc (or leaves the TUI): their decision, so the run is
 * aborted with the reason the engine records as stopped by the user, not as a failure.
 */
function cancelledBy(signal: AbortSignal): AbortSignal {
  const controller = new AbortController();
  if (signal.aborted) controller.abort(CANCELLED);
  else signal.addEventListener("abort", () => controller.abort(CANCELLED), { once: true });
  return controller.signal;
}

/** The AUTO session's usage (one session per frontend turn) as the bridge reports it. */
function turnUsage(usage: Usage): FrontendUsage {
  return {
    input_tokens: usage.input_tokens,
    cached_input_tokens: usage.cached_input_tokens,
    output_tokens: usage.output_tokens,
  };
}
