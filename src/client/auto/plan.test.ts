import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { clip } from "./bounded-text.js";
import {
  MAX_FINDING_CHARS,
  MAX_FINDINGS,
  MAX_SUMMARY_CHARS,
  type PlanTask,
  planSchema,
  type ResultRef,
  workerAnswerSchema,
} from "./contracts.js";
import {
  extractJsonObject,
  MAX_PLAN_INPUT_BYTES,
  parsePlan,
  planJsonSchema,
  toWorkerResult,
  workerAnswerJsonSchema,
} from "./plan.js";

const signals = { complexity: 0.5, context_need: 0.5, risk: 0.2, ambiguity: 0.1, est_tokens: 20_000 };
const task = (id: string, depends_on: string[] = [], kind: PlanTask["kind"] = "research") => ({
  id,
  kind,
  instructions: `do ${id}`,
  depends_on,
  signals,
});
const plan = (...tasks: unknown[]) => ({ tasks });

function errorsOf(raw: unknown): string[] {
  const result = parsePlan(raw);
  if (result.ok) throw new Error("expected the plan to be rejected");
  return result.errors;
}

describe("parsePlan", () => {
  it("accepts a valid DAG as structured output and de-duplicates dependencies", () => {
    const result = parsePlan(plan(task("a"), task("b", ["a", "a"]), task("c", ["a", "b"], "change")));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan.tasks.map((t) => [t.id, t.depends_on])).toEqual([
      ["a", []],
      ["b", ["a"]],
      ["c", ["a", "b"]],
    ]);
  });

  it("finds the plan in answer text with prose and code fences around it", () => {
    const json = JSON.stringify(plan(task("a"), task("b", ["a"])));
    for (const text of [
      json,
      `Here is the plan:\n\`\`\`json\n${json}\n\`\`\`\nLet me know.`,
      `Sure {not json} then ${json} and {"other": 1}`,
      `{"note": "draft"}\n${json}`,
      `An unclosed { brace, then ${json}`,
    ]) {
      const result = parsePlan(text);
      expect(result.ok, text).toBe(true);
      if (result.ok) expect(result.plan.tasks.map((t) => t.id)).toEqual(["a", "b"]);
    }
  });

  it("tolerates braces inside strings while looking for the object", () => {
    const json = JSON.stringify(plan({ ...task("a"), instructions: 'look for "}" and "{" in x.ts' }));
    const result = parsePlan(`plan: ${json}`);
    expect(result.ok).toBe(true);
  });

  it("says when there is no JSON, or the wrong kind of value", () => {
    expect(errorsOf("I think we should first read the code.")[0]).toMatch(/no JSON object found/);
    expect(errorsOf([task("a")])[0]).toMatch(/got an array/);
    expect(errorsOf(42)[0]).toMatch(/got number/);
    expect(errorsOf(null)[0]).toMatch(/got null/);
  });

  it("refuses oversized input without parsing it", () => {
    const big = `${" ".repeat(MAX_PLAN_INPUT_BYTES)}{"tasks": []}`;
    expect(errorsOf(big)[0]).toMatch(/bytes; a plan must be under 262144 bytes/);
    const bigObject = plan({ ...task("a"), instructions: "x".repeat(MAX_PLAN_INPUT_BYTES) });
    expect(errorsOf(bigObject)[0]).toMatch(/must be under/);
  });

  it("reports schema errors with the path and the task id", () => {
    const errors = errorsOf(
      plan(
        { ...task("a"), signals: { ...signals, risk: 3 } },
        { ...task("Bad Id") },
        { ...task("c"), kind: "deploy" },
      ),
    );
    expect(errors.some((e) => e.startsWith('tasks[0].signals.risk (id "a"):'))).toBe(true);
    expect(errors.some((e) => e.startsWith("tasks[1].id:") && e.includes("a-z"))).toBe(true);
    expect(errors.some((e) => e.startsWith('tasks[2].kind (id "c"):'))).toBe(true);
    expect(errorsOf({ tasks: [] })[0]).toMatch(/^tasks:/);
  });

  it("rejects more tasks than allowed, duplicate ids, unknown and self dependencies", () => {
    const thirteen = Array.from({ length: 13 }, (_, i) => task(`t${i}`));
    expect(errorsOf(plan(...thirteen))).toEqual([
      "the plan has 13 tasks; at most 12 are allowed: merge related tasks",
    ]);
    expect(parsePlan(plan(task("a"), task("b"), task("c")), { maxTasks: 2 }).ok).toBe(false);
    expect(errorsOf(plan(task("a"), task("a")))).toEqual([
      'task id "a" is used by tasks[0] and tasks[1]; ids must be unique',
    ]);
    expect(errorsOf(plan(task("a", ["zz"])))).toEqual(['task "a" depends on unknown task "zz"']);
    expect(errorsOf(plan(task("a", ["a"])))).toEqual(['task "a" depends on itself']);
  });

  it("reports a cycle with its path", () => {
    const errors = errorsOf(plan(task("a", ["c"]), task("b", ["a"]), task("c", ["b"]), task("d", ["a"])));
    expect(errors).toEqual(["dependency cycle: a -> c -> b -> a"]);
    const two = errorsOf(plan(task("a", ["b"]), task("b", ["a"]), task("x", ["y"]), task("y", ["x"])));
    expect(two).toEqual(["dependency cycle: a -> b -> a", "dependency cycle: x -> y -> x"]);
  });

  it("accepts a diamond (shared dependencies are not cycles)", () => {
    expect(parsePlan(plan(task("a"), task("b", ["a"]), task("c", ["a"]), task("d", ["b", "c"]))).ok).toBe(
      true,
    );
  });

  it("caps the number of errors", () => {
    const tasks = Array.from({ length: 12 }, (_, i) => task(`t${i}`, ["x1", "x2", "x3"]));
    expect(errorsOf(plan(...tasks))).toHaveLength(20);
  });
});

describe("extractJsonObject", () => {
  it("prefers an object that matches, else the first object", () => {
    expect(extractJsonObject('a {"x":1} b {"y":2}', (v) => "y" in v)).toEqual({ y: 2 });
    expect(extractJsonObject('a {"x":1} b {"y":2}', (v) => "z" in v)).toEqual({ x: 1 });
    expect(extractJsonObject("no json { here")).toBeUndefined();
  });
});

/** Every object node strict: additionalProperties false, every property required; no $ref anywhere. */
function assertStrict(node: unknown, where = "$"): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => {
      assertStrict(item, `${where}[${i}]`);
    });
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const record = node as Record<string, unknown>;
  expect(record.$ref, where).toBeUndefined();
  if (record.type === "object") {
    expect(record.additionalProperties, where).toBe(false);
    expect(record.required, where).toEqual(Object.keys(record.properties as object));
  }
  for (const [key, value] of Object.entries(record)) {
    if (key === "properties") {
      for (const [name, schema] of Object.entries(value as object)) assertStrict(schema, `${where}.${name}`);
    } else assertStrict(value, `${where}.${key}`);
  }
}

describe("JSON Schemas for structured output", () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });

  it("are strict-mode objects and valid draft 2020-12 schemas", () => {
    assertStrict(planJsonSchema);
    assertStrict(workerAnswerJsonSchema);
    expect(ajv.validateSchema(planJsonSchema)).toBe(true);
    expect(ajv.validateSchema(workerAnswerJsonSchema)).toBe(true);
    expect(() => {
      (planJsonSchema as Record<string, unknown>).type = "array";
    }).toThrow();
  });

  it("accept what the zod schemas accept and reject extra keys", () => {
    const validPlan = ajv.compile(planJsonSchema);
    const sample = plan(task("a"), task("b", ["a"], "change"));
    expect(planSchema.safeParse(sample).success).toBe(true);
    expect(validPlan(sample)).toBe(true);
    expect(validPlan(plan({ ...task("a"), extra: 1 }))).toBe(false);
    expect(validPlan(plan({ ...task("a"), signals: { ...signals, est_tokens: 1.5 } }))).toBe(false);
    const validAnswer = ajv.compile(workerAnswerJsonSchema);
    const answer = { summary: "s", findings: ["f"], state_delta: [{ path: "a.ts", change: "c" }] };
    expect(workerAnswerSchema.safeParse(answer).success).toBe(true);
    expect(validAnswer(answer)).toBe(true);
    expect(validAnswer({ summary: "s" })).toBe(false);
  });
});

const ref: ResultRef = {
  ref: `art_${"a".repeat(32)}`,
  task_id: "a",
  bytes: 10,
  sha256: "b".repeat(64),
  expires_at: "2026-11-30T06:00:00Z",
};

describe("toWorkerResult", () => {
  it("uses the structured answer, bounded, with refs and the advisory flag", () => {
    const structured = {
      summary: "s".repeat(MAX_SUMMARY_CHARS + 50),
      findings: Array.from({ length: 20 }, (_, i) => `finding ${i} ${"x".repeat(MAX_FINDING_CHARS)}`),
      state_delta: [{ path: "src/a.ts", change: "rename x" }],
    };
    const result = toWorkerResult("a", "ignored", structured, [ref]);
    expect(result.task_id).toBe("a");
    expect(result.status).toBe("done");
    expect(result.summary).toHaveLength(MAX_SUMMARY_CHARS);
    expect(result.summary.endsWith("…")).toBe(true);
    expect(result.findings).toHaveLength(MAX_FINDINGS);
    expect(result.findings.every((f) => f.length <= MAX_FINDING_CHARS)).toBe(true);
    expect(result.findings.at(-1)).toBe("… 9 more findings in the task's evidence (refs)");
    expect(result.state_delta).toEqual({
      advisory: true,
      changes: [{ path: "src/a.ts", change: "rename x" }],
    });
    expect(result.refs).toEqual([ref]);
  });

  it("finds the JSON answer in text, else falls back to the text as summary", () => {
    const fenced = '```json\n{"summary":"from text","findings":["f1"]}\n```';
    expect(toWorkerResult("a", fenced, null, []).summary).toBe("from text");
    expect(toWorkerResult("a", fenced, null, []).findings).toEqual(["f1"]);
    const prose = toWorkerResult("a", `  plain answer ${"y".repeat(5000)}`, { wrong: true }, [], "failed");
    expect(prose.status).toBe("failed");
    expect(prose.summary.startsWith("plain answer")).toBe(true);
    expect(prose.summary).toHaveLength(MAX_SUMMARY_CHARS);
    expect(prose.findings).toEqual([]);
    expect(toWorkerResult("a", "", undefined, []).summary).toBe("(no answer)");
  });

  it("makes terminal control characters harmless", () => {
    const result = toWorkerResult(
      "a",
      "",
      {
        summary: "ok\x1b[2Jdone\nline2",
        findings: ["\u202eevil"],
        state_delta: [{ path: "a\nb", change: "c" }],
      },
      [],
    );
    expect(result.summary).toBe("ok\\x1b[2Jdone\nline2");
    expect(result.findings).toEqual(["\\u202eevil"]);
    expect(result.state_delta.changes[0]?.path).toBe("a\\x0ab");
  });
});

describe("clip", () => {
  it("cuts to the bound with an ellipsis and never splits a surrogate pair", () => {
    expect(clip("abcdef", 6)).toBe("abcdef");
    expect(clip("abcdef", 4)).toBe("abc…");
    expect(clip("ab👋cd", 4)).toBe("ab…");
  });
});
