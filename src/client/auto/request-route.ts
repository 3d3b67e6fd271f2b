// The supervisor router (seed 004): a simple knowledge question goes to classic RAG (one executor turn with
// the brief), anything that needs changes, steps or code goes to the planner. Deterministic and explainable.

export interface RouteDecision {
  route: "rag" | "plan";
  reason: string;
}

/** Longer requests are rarely simple questions. */
export const MAX_RAG_CHARS = 400;

// Text is matched lower-cased and without diacritics ("é" → "e"), so \b works on Portuguese words too.
const CHANGE_VERBS = [
  // English
  "implement\\w*",
  "refactor\\w*",
  "fix(?:es|ed|ing)?",
  "add(?:s|ed|ing)?",
  "migrat\\w*",
  "creat\\w*",
  "build",
  "remov\\w*",
  "delet\\w*",
  "renam\\w*",
  "updat\\w*",
  "upgrad\\w*",
  "rewrit\\w*",
  "modify",
  "change",
  "replac\\w*",
  "convert",
  "writ\\w* (?:\\w+ ){0,3}tests?",
  // Portuguese (infinitive, imperative, 3rd person)
  "refator\\w*",
  "corrig\\w*",
  "corrij\\w*",
  "consert\\w*",
  "arrum(?:ar|e|a|em)",
  "cri(?:ar|e|a|em)",
  "migr(?:ar|e|a|em)",
  "adicion\\w*",
  "acrescent\\w*",
  "inclu(?:ir|a|i)",
  "apag\\w*",
  "exclu(?:ir|a|i)",
  "renome\\w*",
  "atualiz\\w*",
  "alter(?:ar|e|a)",
  "mud(?:ar|e|a)",
  "substitu\\w*",
  "convert(?:er|a|e)",
  "reescrev\\w*",
  "construa|construir|constroi",
  "escrev\\w* (?:\\w+ ){0,3}testes?",
  "escreva (?:\\w+ ){0,3}testes?",
];
const CHANGE_VERB = new RegExp(`\\b(?:${CHANGE_VERBS.join("|")})\\b`);
const STARTS_WITH_CHANGE_VERB = new RegExp(`^(?:${CHANGE_VERBS.join("|")})\\b`);
/** A request for a change phrased politely or as a question ("can you fix…?", "você pode criar…?"). */
const REQUEST_PREFIX =
  /^(?:(?:please|pls|kindly|por favor|favor)[,\s]+)?(?:(?:can|could|would|will) you (?:please )?|(?:voce |vc |tu )?(?:pode|poderia|consegue|conseguiria|podes) (?:por favor )?|me ajud\w* a |help me )?/;
const QUESTION_START =
  /^(?:what|what's|whats|how|why|where|when|which|who|whom|whose|is|are|was|were|does|do|did|can|could|should|would|will|has|have|explain|describe|summari[sz]e|list|show me|tell me|define|o que|oque|que|como|por que|porque|pq|onde|quando|qual|quais|quem|quant[oa]s?|existe|existem|ha|e|sera|explique|explica|descreva|resuma|liste|mostre|me diga|me fale|me explique|fale sobre|defina)\b/;
const SEQUENCE =
  /\b(?:and then|after that|afterwards|step by step|e entao|em seguida|depois disso|e depois|passo a passo)\b/;
const LIST_LINE = /^\s*(?:[-*•]|\d+[.)])\s+\S/;
const CODE =
  /```|^\s*at \S+ \(|\b[\w.]+\([^)]*\)\s*[;{]|=>|^\s*(?:import|export|const|let|function|def|class)\s/m;
const URL = /\bhttps?:\/\/\S+/g;
const FILE_PATH =
  /(?:^|[\s(`'"])(?:~?\.{0,2}\/)?(?:[\w@.-]+\/)+[\w@.-]+\.[a-z0-9]{1,6}\b|(?:[\w@.-]+\/){2,}[\w@.-]+|\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|go|rs|java|kt|rb|php|cs|cpp|c|h|json|ya?ml|toml|sql|sh|css|html|vue|svelte|lock)\b/i;

/**
 * RAG or plan for a request. In order: too long, a list of steps, code or file paths, a change asked for,
 * not a question, sequencing words → plan; a simple question → rag when knowledge is selected, else plan.
 */
export function routeRequest(text: string, context: { hasKnowledge: boolean }): RouteDecision {
  const trimmed = text.trim();
  const normal = trimmed.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase().replace(/\s+/g, " ");
  const plan = (reason: string): RouteDecision => ({ route: "plan", reason });
  if (trimmed === "") return plan("empty request");
  if (trimmed.length > MAX_RAG_CHARS)
    return plan(`long request (${trimmed.length} > ${MAX_RAG_CHARS} characters)`);
  const lines = trimmed.split(/\r?\n/).filter((line) => line.trim() !== "");
  if (lines.filter((line) => LIST_LINE.test(line)).length >= 2) return plan("several steps (a list)");
  if (CODE.test(trimmed)) return plan("contains code");
  if (FILE_PATH.test(trimmed.replace(URL, " "))) return plan("mentions files or paths");
  const isQuestion = trimmed.endsWith("?") || QUESTION_START.test(normal);
  const head = normal.replace(REQUEST_PREFIX, "");
  const startVerb = STARTS_WITH_CHANGE_VERB.exec(head);
  if (startVerb) return plan(`asks for a change ("${startVerb[0].split(" ")[0]}")`);
  if (!isQuestion) {
    const verb = CHANGE_VERB.exec(normal);
    return plan(verb ? `asks for a change ("${verb[0].split(" ")[0]}")` : "not a question");
  }
  if ((trimmed.match(/\?/g) ?? []).length >= 3) return plan("several questions");
  if (SEQUENCE.test(normal)) return plan("several steps (sequencing words)");
  if (!context.hasKnowledge) return plan("simple question, but no knowledge source is selected");
  return { route: "rag", reason: "simple knowledge question" };
}
