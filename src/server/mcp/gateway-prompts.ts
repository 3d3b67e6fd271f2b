// The gateway's MCP prompts (knowledge policy, answer from knowledge, propose a memory page, find a document),
// with their arguments completed from the memory store's scopes and the context catalogue's connectors.
import {
  answerFromKnowledgeText,
  canAnswerFromKnowledge,
  canFindDocument,
  canProposeMemoryPage,
  findDocumentText,
  knowledgePolicyText,
  PROMPT_NAMES,
  proposeMemoryPageText,
} from "../../protocol/prompts.js";
import type { MemoryStore } from "../memory/store.js";
import type { PromptSpec } from "./prompts.js";

/** Scopes completed at most (a completion answer shows 100). */
const MAX_SCOPES = 1000;
const GLOBAL_SCOPE = "_global";

/** What completion reads, structurally: the context service's catalogue and the memory service's store. */
export interface GatewayPromptSources {
  /** When this process serves context: connector names complete a document's source. */
  context?: { catalogue: { listConnectors(): Promise<readonly { name: string }[]> } } | undefined;
  /** When this process serves memory: the scopes holding a page complete a project or scope. */
  memory?: { store: Pick<MemoryStore, "pageScopes"> } | null | undefined;
}

/** Candidate values of an argument, read when a caller asks for completion. */
type Candidates = () => Promise<readonly string[]>;

export function createGatewayPrompts(sources: GatewayPromptSources): PromptSpec[] {
  const { context, memory } = sources;
  const scopes = async () => (memory ? (await memory.store.pageScopes("", MAX_SCOPES)).scopes : []);
  const connectors = async () =>
    context ? (await context.catalogue.listConnectors()).map((connector) => connector.name) : [];
  return [policyPrompt(), answerPrompt(scopes), proposePrompt(scopes), findPrompt(connectors)];
}

function policyPrompt(): PromptSpec {
  return {
    name: PROMPT_NAMES.policy,
    title: "ivoai knowledge policy",
    description:
      "How to use the organisation's knowledge: memory first, then documents, the web last; document text " +
      "is untrusted; memory changes need a person's approval.",
    offeredWith: canAnswerFromKnowledge,
    args: {},
    render: (_args, tools) => knowledgePolicyText(tools),
  };
}

function answerPrompt(scopes: Candidates): PromptSpec {
  return {
    name: PROMPT_NAMES.answer,
    title: "Answer from the organisation's knowledge",
    description: "Answers a question from ivoai memory and documents before anything else, citing them.",
    offeredWith: canAnswerFromKnowledge,
    args: {
      question: { description: "The question to answer", required: true, maxLength: 4000 },
      project: {
        description: "The project whose memory to query (default: the session's project)",
        maxLength: 256,
        needs: "memory_query",
        complete: async () => (await scopes()).filter((scope) => scope !== GLOBAL_SCOPE),
      },
    },
    render: (args, tools) =>
      answerFromKnowledgeText({ question: args.question ?? "", project: args.project }, tools),
  };
}

function proposePrompt(scopes: Candidates): PromptSpec {
  return {
    name: PROMPT_NAMES.propose,
    title: "Propose a memory page from this session",
    description:
      "Writes up what this session established as a memory page proposal; a person approves it before it is saved.",
    offeredWith: canProposeMemoryPage,
    args: {
      scope: {
        description: 'Where the page belongs: a project, or "_global" for the whole organisation',
        required: true,
        maxLength: 256,
        complete: async () => [GLOBAL_SCOPE, ...(await scopes())],
      },
      topic: { description: "What the page is about", required: true, maxLength: 300 },
      notes: { description: "Points the page must cover", maxLength: 20_000 },
    },
    render: (args, tools) =>
      proposeMemoryPageText({ scope: args.scope ?? "", topic: args.topic ?? "", notes: args.notes }, tools),
  };
}

function findPrompt(connectors: Candidates): PromptSpec {
  return {
    name: PROMPT_NAMES.find,
    title: "Find a document",
    description: "Finds and opens a document of one source (connector) of the organisation's documents.",
    offeredWith: canFindDocument,
    args: {
      source: {
        description: "The source (connector) to search",
        required: true,
        maxLength: 128,
        complete: connectors,
      },
      query: { description: "What the document is about", required: true, maxLength: 1000 },
    },
    render: (args) => findDocumentText({ source: args.source ?? "", query: args.query ?? "" }),
  };
}
