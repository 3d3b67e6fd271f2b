// The ivoai-orchestrator MCP: a stdio server, injected into the primary's CLI for its lifetime only, that
// relays delegate / task_status / artifact_read to the supervisor over the private control channel. It holds
// no state and no authority of its own: the supervisor checks everything (ownership, TTL, size, digest).
import type { Readable, Writable } from "node:stream";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { IvoaiError, isIvoaiError } from "../../../shared/errors.js";
import { IVOAI_VERSION } from "../../../shared/version.js";
import type { StdioMcpServer } from "../contracts.js";
import { controlClient, issuesText } from "./control.js";
import {
  artifactRangeSchema,
  type ControlHandlers,
  delegateInputSchema,
  delegateOutcomeSchema,
  readArtifactInputSchema,
  statusInputSchema,
  statusOutcomeSchema,
} from "./protocol.js";

export const ORCHESTRATOR_MCP_NAME = "ivoai-orchestrator";
export const ORCHESTRATOR_SOCKET_ENV = "IVOAI_ORCHESTRATOR_SOCKET";
export const ORCHESTRATOR_TOKEN_ENV = "IVOAI_ORCHESTRATOR_TOKEN";
/** The hidden CLI command that runs this server. */
export const ORCHESTRATOR_MCP_COMMAND = "orchestrator-mcp";
/** The only tools the server lists. */
export const ORCHESTRATOR_TOOLS = ["delegate", "task_status", "artifact_read"] as const;
export type OrchestratorTool = (typeof ORCHESTRATOR_TOOLS)[number];

/** Largest JSON-RPC message accepted on stdin (tool arguments are at most a few KiB). */
const MAX_STDIN_MESSAGE_BYTES = 1024 * 1024;

const INSTRUCTIONS =
  "ivoai orchestrator: delegate advisory, read-only tasks to workers, follow them with task_status, and read " +
  "a worker's exact evidence with artifact_read (by ResultRef, in bounded ranges). Only you apply changes.";

/** How the primary's CLI starts this server: `<ivoai> orchestrator-mcp`, credentials in the environment only. */
export function orchestratorMcpServer(selfCommand: string[]): StdioMcpServer {
  const [command, ...rest] = selfCommand;
  if (!command) throw new IvoaiError("USAGE", "orchestratorMcpServer needs the command that runs ivoai");
  return {
    name: ORCHESTRATOR_MCP_NAME,
    command,
    args: [...rest, ORCHESTRATOR_MCP_COMMAND],
    envVars: [ORCHESTRATOR_SOCKET_ENV, ORCHESTRATOR_TOKEN_ENV],
  };
}

interface ToolDef {
  input: z.ZodType;
  output: z.ZodType;
  tool: Omit<Tool, "inputSchema" | "outputSchema">;
  run(control: ControlHandlers, args: never): Promise<unknown>;
}

const TOOLS: Record<OrchestratorTool, ToolDef> = {
  delegate: {
    input: delegateInputSchema,
    output: delegateOutcomeSchema,
    tool: {
      name: "delegate",
      title: "Delegate a task to a read-only worker",
      description:
        "Starts an advisory, read-only worker task (research, analysis or review) and returns its task id and " +
        "state at once. Optional depends_on (task ids that must finish first) and signals (0-1 complexity, " +
        "context_need, risk, ambiguity; est_tokens) help ivoai pick the worker's model. Workers never change files.",
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    run: (control, args: z.infer<typeof delegateInputSchema>) => control.delegate(args),
  },
  task_status: {
    input: statusInputSchema,
    output: statusOutcomeSchema,
    tool: {
      name: "task_status",
      title: "Task status",
      description:
        "The state of one task (task_id) or of all of them; a finished task carries its bounded WorkerResult: " +
        "summary, findings, advisory state changes and refs to the exact evidence (read it with artifact_read).",
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    run: (control, args: z.infer<typeof statusInputSchema>) => control.status(args.task_id),
  },
  artifact_read: {
    input: readArtifactInputSchema,
    output: artifactRangeSchema,
    tool: {
      name: "artifact_read",
      title: "Read a worker's evidence",
      description:
        "Returns an exact range of an artifact by its ref (art_…): offset and length are UTF-8 bytes (length at " +
        "most 65536, the default); a range never splits a character. Follow next_offset until it is null to " +
        "read the whole artifact; bytes and sha256 describe the whole artifact.",
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    run: (control, args: z.infer<typeof readArtifactInputSchema>) =>
      control.readArtifact(args.ref, args.offset, args.length),
  },
};

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Tool["inputSchema"] {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest as Tool["inputSchema"];
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** The MCP server over any ControlHandlers (the control client in production). */
export function createOrchestratorServer(control: ControlHandlers): Server {
  const server = new Server(
    { name: ORCHESTRATOR_MCP_NAME, version: IVOAI_VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  const tools: Tool[] = ORCHESTRATOR_TOOLS.map((name) => ({
    ...TOOLS[name].tool,
    inputSchema: jsonSchema(TOOLS[name].input, "input"),
    outputSchema: jsonSchema(TOOLS[name].output, "output"),
  }));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const name = request.params.name;
    if (!(ORCHESTRATOR_TOOLS as readonly string[]).includes(name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 100)}`);
    }
    const def = TOOLS[name as OrchestratorTool];
    const args = def.input.safeParse(request.params.arguments ?? {});
    if (!args.success) return toolError(`invalid arguments for ${name}: ${issuesText(args.error)}`);
    try {
      const structured = (await def.run(control, args.data as never)) as Record<string, unknown>;
      return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const line = (message.split("\n")[0] ?? "").slice(0, 500);
      // The supervisor's refusals (IvoaiError) say why in one line; anything else is reported, never thrown.
      return toolError(isIvoaiError(error) ? `${name}: ${line}` : `${name} failed: ${line}`);
    }
  });
  return server;
}

export interface OrchestratorMcpIo {
  stdin?: Readable;
  stdout?: Writable;
  /** Resolves when the process is asked to stop. */
  stopSignal?: Promise<unknown>;
}

/**
 * Serves the orchestrator MCP on stdio until stdin ends or a stop signal arrives. Reads the control socket and
 * token from the environment (never argv); refuses (USAGE, exit 2) without them.
 */
export async function runOrchestratorMcp(env: NodeJS.ProcessEnv, io: OrchestratorMcpIo = {}): Promise<void> {
  const socketPath = env[ORCHESTRATOR_SOCKET_ENV];
  const token = env[ORCHESTRATOR_TOKEN_ENV];
  if (!socketPath || !token) {
    throw new IvoaiError(
      "USAGE",
      `orchestrator-mcp is started by an ivoai supervisor: ${ORCHESTRATOR_SOCKET_ENV} and ${ORCHESTRATOR_TOKEN_ENV} must be set`,
    );
  }
  const stdin = io.stdin ?? process.stdin;
  const server = createOrchestratorServer(controlClient(socketPath, token));
  const transport = new StdioServerTransport(stdin, io.stdout ?? process.stdout, {
    maxBufferSize: MAX_STDIN_MESSAGE_BYTES,
  });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  const ended = new Promise<void>((resolve) => {
    stdin.once("end", () => resolve());
    stdin.once("close", () => resolve());
  });
  await Promise.race([closed, ended, ...(io.stopSignal ? [io.stopSignal] : [])]);
  await server.close();
}
