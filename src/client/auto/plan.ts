// The planner's DAG as ivoai accepts it (schema, size, ids, dependencies, no cycles), the JSON Schemas handed
// to the CLIs' structured-output flags, and the bounded WorkerResult built from a worker's answer.
import type { z } from "zod";
import { terminalText } from "../../shared/terminal-text.js";
import { clip } from "./bounded-text.js";
import {
  MAX_FINDING_CHARS,
  MAX_FINDINGS,
  MAX_PLAN_TASKS,
  MAX_SUMMARY_CHARS,
  type Plan,
  planSchema,
  type ResultRef,
  type WorkerResult,
  workerAnswerSchema,
} from "./contracts.js";

export {
  consolidationPrompt,
  handoffPrompt,
  PROMPT_LIMITS,
  planningPrompt,
  repairPrompt,
  workerPrompt,
} from "./prompts.js";

/** Largest planner answer (text or serialised structured output) ivoai reads. */
export const MAX_PLAN_INPUT_BYTES = 256 * 1024;
/** Validation errors reported at most (a model repairs a few at a time better than a wall of them). */
export const MAX_PLAN_ERRORS = 20;
const MAX_PATH_CHARS = 300;
/** Object starts tried when looking for JSON inside prose. */
const MAX_JSON_ATTEMPTS = 64;

export type PlanParseResult = { ok: true; plan: Plan } | { ok: false; errors: string[] };

/**
 * Validates a planner answer: its structured output, or its text (prose and code fences around the JSON are
 * tolerated). On success the plan's depends_on lists are de-duplicated; on failure the errors are short lines
 * meant for the repair prompt.
 */
export function parsePlan(raw: unknown, options: { maxTasks?: number } = {}): PlanParseResult {
  const maxTasks = Math.max(1, Math.min(MAX_PLAN_TASKS, Math.floor(options.maxTasks ?? MAX_PLAN_TASKS)));
  const candidate = planCandidate(raw);
  if (!candidate.ok) return candidate;
  const parsed = planSchema.safeParse(candidate.value);
  if (!parsed.success) return { ok: false, errors: zodErrors(parsed.error, candidate.value) };
  const tasks = parsed.data.tasks.map((task) => ({ ...task, depends_on: [...new Set(task.depends_on)] }));
  const errors: string[] = [];
  if (tasks.length > maxTasks) {
    errors.push(`the plan has ${tasks.length} tasks; at most ${maxTasks} are allowed: merge related tasks`);
  }
  const firstIndex = new Map<string, number>();
  tasks.forEach((task, index) => {
    const seen = firstIndex.get(task.id);
    if (seen === undefined) firstIndex.set(task.id, index);
    else
      errors.push(`task id "${task.id}" is used by tasks[${seen}] and tasks[${index}]; ids must be unique`);
  });
  for (const task of tasks) {
    for (const dependency of task.depends_on) {
      if (dependency === task.id) errors.push(`task "${task.id}" depends on itself`);
      else if (!firstIndex.has(dependency)) {
        errors.push(`task "${task.id}" depends on unknown task "${clip(dependency, 40)}"`);
      }
    }
  }
  for (const cycle of findCycles(tasks)) errors.push(`dependency cycle: ${cycle.join(" -> ")}`);
  return errors.length > 0
    ? { ok: false, errors: errors.slice(0, MAX_PLAN_ERRORS) }
    : { ok: true, plan: { tasks } };
}

type Candidate = { ok: true; value: unknown } | { ok: false; errors: string[] };

function planCandidate(raw: unknown): Candidate {
  if (typeof raw === "string") {
    const bytes = Buffer.byteLength(raw, "utf8");
    if (bytes > MAX_PLAN_INPUT_BYTES) return tooLarge(bytes);
    const found = extractJsonObject(raw, (value) => "tasks" in value);
    if (found === undefined) {
      return {
        ok: false,
        errors: ['no JSON object found in the answer: return only the JSON plan {"tasks": [...]}'],
      };
    }
    return { ok: true, value: found };
  }
  if (Array.isArray(raw)) return { ok: false, errors: ['expected an object {"tasks": [...]}, got an array'] };
  if (typeof raw !== "object" || raw === null) {
    return {
      ok: false,
      errors: [`expected a JSON plan object {"tasks": [...]}, got ${raw === null ? "null" : typeof raw}`],
    };
  }
  let serialised: string | undefined;
  try {
    serialised = JSON.stringify(raw);
  } catch {
    return { ok: false, errors: ["the plan is not JSON data"] };
  }
  const bytes = Buffer.byteLength(serialised ?? "", "utf8");
  return bytes > MAX_PLAN_INPUT_BYTES ? tooLarge(bytes) : { ok: true, value: raw };
}

function tooLarge(bytes: number): Candidate {
  return {
    ok: false,
    errors: [
      `the answer is ${bytes} bytes; a plan must be under ${MAX_PLAN_INPUT_BYTES} bytes: shorten instructions`,
    ],
  };
}

function zodErrors(error: z.ZodError, value: unknown): string[] {
  const tasks = isRecord(value) && Array.isArray(value.tasks) ? value.tasks : [];
  return error.issues.slice(0, MAX_PLAN_ERRORS).map((issue) => {
    let where = "";
    for (const key of issue.path) {
      where += typeof key === "number" ? `[${key}]` : `${where === "" ? "" : "."}${String(key)}`;
    }
    const index = issue.path[0] === "tasks" ? issue.path[1] : undefined;
    const task = typeof index === "number" ? tasks[index] : undefined;
    const id =
      isRecord(task) && typeof task.id === "string" && issue.path[2] !== "id"
        ? ` (id "${clip(task.id, 40)}")`
        : "";
    return clip(`${where === "" ? "plan" : where}${id}: ${issue.message}`, 300);
  });
}

/** Each dependency cycle once, as a path that returns to its start (at most 3 reported). */
function findCycles(tasks: readonly { id: string; depends_on: string[] }[]): string[][] {
  const dependencies = new Map(tasks.map((task) => [task.id, task.depends_on]));
  const state = new Map<string, "visiting" | "visited">();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (id: string): void => {
    state.set(id, "visiting");
    stack.push(id);
    for (const next of dependencies.get(id) ?? []) {
      if (next === id || !dependencies.has(next)) continue;
      const seen = state.get(next);
      if (seen === "visiting") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    stack.pop();
    state.set(id, "visited");
  };
  for (const task of tasks) if (!state.has(task.id)) visit(task.id);
  return cycles.slice(0, 3);
}

// ---------------------------------------------------------------------------------------------------------
// JSON inside an answer.

/**
 * The JSON object in a model's answer: the whole text, a fenced code block, or the first balanced `{…}` that
 * parses. Objects matching `prefer` win over other objects. Undefined when there is none.
 */
export function extractJsonObject(
  text: string,
  prefer: (value: Record<string, unknown>) => boolean = () => true,
): Record<string, unknown> | undefined {
  let fallback: Record<string, unknown> | undefined;
  const consider = (source: string): Record<string, unknown> | undefined => {
    const value = tryJson(source);
    if (!isRecord(value)) return undefined;
    if (prefer(value)) return value;
    fallback ??= value;
    return undefined;
  };
  const whole = consider(text.trim());
  if (whole) return whole;
  for (const match of text.matchAll(/```[a-zA-Z]*[ \t]*\r?\n([\s\S]*?)```/g)) {
    const fenced = consider(match[1] ?? "");
    if (fenced) return fenced;
  }
  let attempts = 0;
  let from = text.indexOf("{");
  while (from !== -1 && attempts < MAX_JSON_ATTEMPTS) {
    attempts += 1;
    const end = balancedEnd(text, from);
    const value = end === -1 ? undefined : tryJson(text.slice(from, end + 1));
    if (isRecord(value)) {
      if (prefer(value)) return value;
      fallback ??= value;
      from = text.indexOf("{", end + 1);
    } else {
      from = text.indexOf("{", from + 1);
    }
  }
  return fallback;
}

/** Index of the `}` closing the object opened at `start` (strings and escapes respected), or -1. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === "\\") index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") depth += 1;
    else if (char === "}") {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}

function tryJson(text: string): unknown {
  if (!text.startsWith("{")) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------------------
// JSON Schemas for the CLIs' structured output (codex --output-schema, claude --json-schema).
//
// OpenAI strict mode: every object has additionalProperties:false and lists every property in required; no
// $ref. Length and range constraints stay in descriptions (strict-mode and Anthropic support for them
// differs); ivoai's zod schemas enforce them on the answer and the repair turn reports violations.

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

function strictObject(properties: Record<string, unknown>, description?: string): Record<string, unknown> {
  return {
    type: "object",
    ...(description === undefined ? {} : { description }),
    additionalProperties: false,
    required: Object.keys(properties),
    properties,
  };
}

const unitNumber = (meaning: string) => ({ type: "number", description: `0 to 1: ${meaning}` });

/** The plan DAG, strict-mode compatible. */
export const planJsonSchema: Readonly<Record<string, unknown>> = deepFreeze(
  strictObject(
    {
      tasks: {
        type: "array",
        description: `1 to ${MAX_PLAN_TASKS} tasks`,
        items: strictObject({
          id: {
            type: "string",
            description: "unique; 1-32 of a-z, 0-9, _ and -, starting with a letter or digit",
          },
          kind: {
            type: "string",
            enum: ["research", "analysis", "review", "change"],
            description: "research/analysis/review go to read-only workers; change runs in the primary",
          },
          instructions: {
            type: "string",
            description: "self-contained instructions, at most 4000 characters",
          },
          depends_on: {
            type: "array",
            items: { type: "string" },
            description: "ids of the tasks whose results this task needs; no cycles",
          },
          signals: strictObject(
            {
              complexity: unitNumber("how hard the reasoning is"),
              context_need: unitNumber("how much must be read"),
              risk: unitNumber("how bad a wrong answer is"),
              ambiguity: unitNumber("how unclear the task is"),
              est_tokens: {
                type: "integer",
                description: "expected tokens a worker spends (input + output)",
              },
            },
            "numeric signals ivoai scores to pick a model",
          ),
        }),
      },
    },
    "an ivoai AUTO plan: a DAG of tasks",
  ),
);

/** A worker's answer, strict-mode compatible. */
export const workerAnswerJsonSchema: Readonly<Record<string, unknown>> = deepFreeze(
  strictObject(
    {
      summary: { type: "string", description: `the answer, at most ${MAX_SUMMARY_CHARS} characters` },
      findings: {
        type: "array",
        items: { type: "string" },
        description: `at most ${MAX_FINDINGS} findings of at most ${MAX_FINDING_CHARS} characters each`,
      },
      state_delta: {
        type: "array",
        description: "advisory: changes the worker recommends; only the primary applies changes",
        items: strictObject({
          path: { type: "string", description: "file or resource the change concerns" },
          change: {
            type: "string",
            description: `what should change, at most ${MAX_FINDING_CHARS} characters`,
          },
        }),
      },
    },
    "a read-only worker's answer",
  ),
);

// ---------------------------------------------------------------------------------------------------------
// Worker results.

/**
 * The bounded, provider-neutral result the primary receives for a worker's task. Uses the structured output
 * when it follows workerAnswerSchema, else JSON found in the text, else the text's beginning as the summary.
 * Control characters become visible escapes.
 */
export function toWorkerResult(
  taskId: string,
  outcomeText: string,
  structured: unknown,
  refs: readonly ResultRef[],
  status: "done" | "failed" = "done",
): WorkerResult {
  const answer = workerAnswer(outcomeText, structured);
  const text = (value: string, max: number) => clip(terminalText(value.trim(), { multiline: true }), max);
  const summary = answer
    ? text(answer.summary, MAX_SUMMARY_CHARS)
    : text(outcomeText.slice(0, MAX_SUMMARY_CHARS * 4), MAX_SUMMARY_CHARS);
  const findings = (answer?.findings ?? [])
    .map((finding) => text(finding, MAX_FINDING_CHARS))
    .filter((finding) => finding !== "");
  if (findings.length > MAX_FINDINGS) {
    const more = findings.length - (MAX_FINDINGS - 1);
    findings.splice(
      MAX_FINDINGS - 1,
      findings.length,
      `… ${more} more findings in the task's evidence (refs)`,
    );
  }
  const changes = (answer?.state_delta ?? []).slice(0, MAX_FINDINGS).map((entry) => ({
    path: clip(terminalText(entry.path.trim()), MAX_PATH_CHARS),
    change: text(entry.change, MAX_FINDING_CHARS),
  }));
  return {
    task_id: taskId,
    status,
    summary: summary === "" ? "(no answer)" : summary,
    findings,
    state_delta: { advisory: true, changes },
    refs: [...refs],
  };
}

type WorkerAnswer = z.infer<typeof workerAnswerSchema>;

function workerAnswer(text: string, structured: unknown): WorkerAnswer | undefined {
  const direct = workerAnswerSchema.safeParse(structured);
  if (direct.success) return direct.data;
  if (Buffer.byteLength(text, "utf8") > MAX_PLAN_INPUT_BYTES) return undefined;
  const found = extractJsonObject(text, (value) => typeof value.summary === "string");
  const parsed = workerAnswerSchema.safeParse(found);
  return parsed.success ? parsed.data : undefined;
}
