// What a tool of an MCP endpoint is: its spec (name, tier, scope, input and output shapes, run or propose), the
// context a call runs in, and the zod schemas the endpoint derives from a spec once.
import { z } from "zod";
import type { Scope } from "../../protocol/scopes.js";
import { type SecurityTier, type ToolStatus, toolEnvelopeSchema } from "../../protocol/tool-envelope.js";
import type { ToolName, ToolTable } from "../../protocol/tools.js";
import type { Proposal } from "../approvals/gate.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import type { McpLog } from "./logging.js";

export interface ToolContext {
  client: AuthenticatedClient;
  /** The agent session, when the caller names it (header x-ivoai-session-id). */
  sessionId: string | null;
  /** The caller's project scope, when it names one (header x-ivoai-project). */
  project: string | null;
  /** Log messages for the caller (notifications/message), when it set a level and its request streams. */
  log?: McpLog;
  /** The gateway's id of the HTTP request: a failure's answer names it, and the log line carries it. */
  requestId?: string;
}

export interface ToolOutcome<Data extends object = object> {
  status?: ToolStatus;
  data: Data;
  /** What a model reads; document text inside must already be labelled untrusted. */
  text: string;
  /**
   * What the audit event's detail says the call was about (a search's query, the document read), so that
   * `server eval --from-feedback` can pair searches with what was opened after them; never a secret.
   */
  audit?: Record<string, unknown>;
}

interface ToolSpecBase<Shape extends z.ZodRawShape> {
  name: ToolName;
  title: string;
  description: string;
  scope: Scope;
  input: Shape;
}

/** A read tool runs at once; `output` describes its success data exactly (its listed outputSchema). */
export interface ReadToolSpec<
  Shape extends z.ZodRawShape = z.ZodRawShape,
  Output extends z.ZodObject = z.ZodObject,
> extends ToolSpecBase<Shape> {
  tier: "read";
  output: Output;
  run(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<ToolOutcome<z.infer<Output>>>;
}

/** A write or admin tool only proposes: the endpoint files the proposal with the approval gate. */
export interface WriteToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape> extends ToolSpecBase<Shape> {
  tier: Exclude<SecurityTier, "read">;
  propose(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<Proposal>;
}

export type ToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape, Output extends z.ZodObject = z.ZodObject> =
  | ReadToolSpec<Shape, Output>
  | WriteToolSpec<Shape>;

/**
 * Keeps a tool's arguments, its output and their shapes tied together while a list holds specs of different
 * shapes: a read tool's run() cannot return data its output schema does not describe. The name must be in the
 * protocol's tool table and the tier and scope must be the table's, or this fails to type-check.
 */
export function defineTool<Name extends ToolName, Shape extends z.ZodRawShape, Output extends z.ZodObject>(
  spec: ToolSpec<Shape, Output> & {
    name: Name;
    tier: ToolTable[Name]["tier"];
    scope: ToolTable[Name]["scope"];
  },
): ToolSpec {
  return spec as unknown as ToolSpec;
}

const outputSchemas = new WeakMap<ToolSpec, z.ZodObject>();
/** A tool's listed output: the envelope with its data described exactly, built once per tool. */
export function outputSchema(tool: ToolSpec): z.ZodObject {
  let schema = outputSchemas.get(tool);
  if (!schema) {
    schema = tool.tier === "read" ? toolEnvelopeSchema("read", tool.output) : toolEnvelopeSchema(tool.tier);
    outputSchemas.set(tool, schema);
  }
  return schema;
}

const inputSchemas = new WeakMap<ToolSpec, z.ZodObject<z.ZodRawShape>>();
/** A tool's input schema as one zod object, built once per tool. */
export function inputSchema(tool: ToolSpec): z.ZodObject<z.ZodRawShape> {
  let schema = inputSchemas.get(tool);
  if (!schema) {
    schema = z.object(tool.input);
    inputSchemas.set(tool, schema);
  }
  return schema;
}
