// The shapes the AUTO frontend's parts agree on: the loopback OpenAI-compatible bridge talks to the AUTO engine
// only through `FrontendEngine`; the catalogue turns opaque model ids into executor selections.
import type { ExecutorName } from "../auto/contracts.js";

/** What the operator picked in OpenCode's model list: `auto` (the scheduler decides) or one exact profile. */
export type ModelSelection =
  | { kind: "auto" }
  | { kind: "explicit"; id: string; executor: ExecutorName; model: string; effort: string };

/** One OpenCode conversation turn, as the bridge hands it to the engine. */
export interface FrontendTurn {
  /** OpenCode's non-secret session id (from the server plugin's header), or null when absent. */
  frontendSession: string | null;
  /** The user's latest message (text only). */
  prompt: string;
  selection: ModelSelection;
  /** Reasoning effort OpenCode sent (its "variant"), already validated by the bridge; null = default. */
  effort: string | null;
  /** Ends when OpenCode disconnects or cancels: the engine ends the executor's process group. */
  signal: AbortSignal;
  /** Streams answer text as it arrives (may be called zero or more times before the turn ends). */
  onText(delta: string): void;
}

/** The tokens every executor turn of one frontend turn reported, summed (the AUTO session's usage). */
export interface FrontendUsage {
  input_tokens: number;
  /** Of input_tokens, those read from the vendor's prompt cache. */
  cached_input_tokens: number;
  output_tokens: number;
}

export interface FrontendTurnResult {
  /** "stop" when the turn completed; "error" with a one-line message otherwise. */
  finish: "stop" | "error";
  /** The whole answer (what onText streamed, or the final text when nothing streamed). */
  text: string;
  error: string | null;
  /** Absent when no executor turn reported usage. */
  usage?: FrontendUsage;
}

export interface FrontendEngine {
  turn(turn: FrontendTurn): Promise<FrontendTurnResult>;
}

/** One entry of the bridge's GET /v1/models, and what OpenCode's provider config lists. */
export interface CatalogueEntry {
  /** Opaque id OpenCode sends back as `model` ("auto" or "mdl_…"). */
  id: string;
  /** Human name shown in OpenCode's model picker. */
  name: string;
  selection: ModelSelection;
}
