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
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g,
];

/** Field names whose values are secret whatever they look like. */
const SECRET_KEYS =
  /^(authorization|cookie|set-cookie|proxy-authorization|code|credential|token|access_token|refresh_token|password|secret|api_key|apikey|client_secret|activation_code)$/i;

export function redactText(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (_match, scheme: unknown) =>
      typeof scheme === "string" && /^(bearer|basic)$/i.test(scheme) ? `${scheme} ${REDACTED}` : REDACTED,
    );
  }
  return out;
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
