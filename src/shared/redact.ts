// Removes secrets from anything ivoai writes to a log, a diagnostic or an error line.

const REDACTED = "[REDACTED]";

/** Shapes of secrets that must never reach a log, whatever field they hide in. */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bivoai_[a-z]+_[A-Za-z0-9_-]{20,}/g,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
];

/**
 * Dotted runs of base64url characters, matched only from a run's start so that scanning stays linear; JWTs
 * (`eyJ…` header, payload, signature of 10+ characters each) are then found by scanning it (see `redactJwts`).
 */
const DOTTED_RUN = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+/g;

/** Field names whose values are secret whatever they look like. */
const SECRET_KEYS =
  /^(authorization|cookie|set-cookie|proxy-authorization|code|credential|token|access_token|refresh_token|password|secret|api_key|apikey|client_secret|activation_code)$/i;

/**
 * What every secret shape above starts with (JWTs: `eyJ`), in any case: a text holding none of these has
 * nothing to redact, and most log lines hold none, so they are scanned once instead of nine times.
 */
const SECRET_START = /bearer|basic|ivoai_|sk-|gh[opusr]_|github_pat_|xox[abprs]-|akia|aiza|eyj/i;

export function redactText(text: string): string {
  if (!SECRET_START.test(text)) return text;
  let out = text;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (_match, scheme: unknown) =>
      typeof scheme === "string" && /^(bearer|basic)$/i.test(scheme) ? `${scheme} ${REDACTED}` : REDACTED,
    );
  }
  return out.replace(DOTTED_RUN, redactJwts);
}

/**
 * Replaces what `/\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g` matches in one dotted
 * run, in linear time (that regex is quadratic on `eyJ-eyJ-…`): a header part holding `eyJ` at a word
 * boundary with 10+ characters after it, then two parts of 10+ characters.
 */
function redactJwts(run: string): string {
  let out = "";
  let copied = 0;
  let header = run.indexOf("eyJ");
  while (header !== -1) {
    const partStart = run.lastIndexOf(".", header) + 1;
    const partEnd = endOfPart(run, header);
    let at = header;
    while (at !== -1 && at < partEnd && at !== partStart && run[at - 1] !== "-")
      at = run.indexOf("eyJ", at + 1);
    if (at !== -1 && at < partEnd && partEnd - at - 3 >= 10 && partEnd < run.length) {
      const payloadEnd = endOfPart(run, partEnd + 1);
      const signatureEnd = payloadEnd < run.length ? endOfPart(run, payloadEnd + 1) : payloadEnd;
      if (payloadEnd - partEnd - 1 >= 10 && signatureEnd - payloadEnd - 1 >= 10) {
        out += `${run.slice(copied, at)}${REDACTED}`;
        copied = signatureEnd;
        header = run.indexOf("eyJ", signatureEnd);
        continue;
      }
    }
    header = run.indexOf("eyJ", partEnd);
  }
  return out + run.slice(copied);
}

function endOfPart(run: string, from: number): number {
  const dot = run.indexOf(".", from);
  return dot === -1 ? run.length : dot;
}

/** A deep copy of `value` with secret-named fields and secret-shaped strings replaced. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (depth > 20) return REDACTED;
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (value instanceof Error) return redactText(value.message);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] =
        SECRET_KEYS.test(key) && item !== null && item !== undefined
          ? REDACTED
          : redactValue(item, depth + 1);
    }
    return out;
  }
  return value;
}
