// MCP prompts on an endpoint: each offered only with the tools it tells the model to use, with arguments
// completed from real data (prefix-filtered; the SDK caps an answer at 100 values).
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolName } from "../../protocol/tools.js";
import type { Logger } from "../../shared/logger.js";
import { publicFailure } from "./wire-error.js";

export interface PromptArgumentSpec {
  description: string;
  required?: boolean;
  maxLength: number;
  /** The argument exists only for callers offered this tool (its values may tell what only that tool reads). */
  needs?: ToolName;
  /** Candidate values (the endpoint keeps those starting with what the user typed); `chosen`: other arguments. */
  complete?: (chosen: Readonly<Record<string, string>>) => Promise<readonly string[]>;
}

export interface PromptSpec {
  name: string;
  title: string;
  description: string;
  /** Offered to a caller whose offered tools (names) make this prompt usable. */
  offeredWith(tools: ReadonlySet<string>): boolean;
  args: Readonly<Record<string, PromptArgumentSpec>>;
  /** The prompt's text for these arguments, naming only the offered tools. */
  render(args: Readonly<Record<string, string | undefined>>, tools: ReadonlySet<string>): string;
}

/** Values of `candidates` starting with `typed` (case-insensitive), sorted, without repeats. */
export function completionsFor(candidates: readonly string[], typed: string): string[] {
  const prefix = typed.toLowerCase();
  return [...new Set(candidates)].filter((value) => value.toLowerCase().startsWith(prefix)).sort();
}

/** The prompts a caller offered these tools sees. */
export function offeredPrompts(specs: readonly PromptSpec[], tools: ReadonlySet<string>): PromptSpec[] {
  return specs.filter((spec) => spec.offeredWith(tools));
}

/**
 * Registers the prompts usable with `tools` on one request's server (no I/O here: completion runs on demand).
 * The prompt list is fixed for a server's life, so list changes are not announced. A prompt that fails to render
 * answers by the wire's error policy (wire-error.ts, installed on every handler of the server).
 */
export function registerPrompts(
  server: McpServer,
  specs: readonly PromptSpec[],
  tools: ReadonlySet<string>,
  logger: Logger,
  requestId?: string,
): void {
  const offered = offeredPrompts(specs, tools);
  if (offered.length === 0) return;
  for (const spec of offered) {
    const shape = argumentsShape(spec, tools, logger, requestId);
    const result = (args: Record<string, string | undefined>): GetPromptResult => ({
      description: spec.description,
      messages: [{ role: "user", content: { type: "text", text: spec.render(args, tools) } }],
    });
    const meta = { title: spec.title, description: spec.description };
    if (Object.keys(shape).length === 0) server.registerPrompt(spec.name, meta, () => result({}));
    else server.registerPrompt(spec.name, { ...meta, argsSchema: shape }, (args) => result(args));
  }
  server.server.registerCapabilities({ prompts: { listChanged: false } });
}

/** The prompt's arguments a caller offered `tools` has, each completed when its spec says how. */
function argumentsShape(
  spec: PromptSpec,
  tools: ReadonlySet<string>,
  logger: Logger,
  requestId: string | undefined,
): Record<string, z.ZodType<string | undefined>> {
  const shape: Record<string, z.ZodType<string | undefined>> = {};
  for (const [name, arg] of Object.entries(spec.args)) {
    if (arg.needs && !tools.has(arg.needs)) continue;
    const text = arg.required
      ? z.string().min(1).max(arg.maxLength).describe(arg.description)
      : z.string().max(arg.maxLength).optional().describe(arg.description);
    const complete = arg.complete;
    shape[name] = complete
      ? completable(text, async (value, context) => {
          try {
            return completionsFor(await complete(context?.arguments ?? {}), value ?? "");
          } catch (error) {
            // A store that fails completes nothing; by the wire's policy its details go to the log only.
            publicFailure(error, {
              logger,
              requestId,
              msg: "prompt completion failed",
              fields: { prompt: spec.name, argument: name },
            });
            return [];
          }
        })
      : text;
  }
  return shape;
}
