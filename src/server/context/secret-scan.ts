// Secrets found by content, whatever the file is called: private key blocks, AWS key pairs, GitHub and Slack
// tokens, signed JWTs. Native substring search finds the anchors; each candidate is checked in bounded steps.

/** The shape of secret that made a document sensitive (never the secret itself). */
export type SecretKind = "private key" | "AWS access key" | "GitHub token" | "Slack token" | "JWT";

const LF = 10;
const CR = 13;
const BLOCK = Buffer.from(" BLOCK");
const DASHES = Buffer.from("-----");
const GITHUB = Buffer.from("github");
const UNDERSCORE = 95;
/** The byte after `gh` in a GitHub token prefix: p(ersonal), o(auth), u(ser), s(erver), r(efresh). */
const GITHUB_KINDS = [..."pousr"].map((c) => c.charCodeAt(0));

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}
function isLower(c: number): boolean {
  return c >= 97 && c <= 122;
}
function isAlnum(c: number): boolean {
  return isDigit(c) || isUpper(c) || isLower(c);
}
function isBase64(c: number): boolean {
  return isAlnum(c) || c === 43 || c === 47 || c === 61;
}
function isBase64Url(c: number): boolean {
  return isAlnum(c) || c === 45 || c === 95;
}
/** Byte at `i`, or -1 past either end (a boundary). */
function at(data: Buffer, i: number): number {
  return i >= 0 && i < data.length ? (data[i] as number) : -1;
}

/** Every offset where `anchor` occurs, in order. */
function* occurrences(data: Buffer, anchor: string): Generator<number> {
  for (let i = data.indexOf(anchor); i >= 0; i = data.indexOf(anchor, i + 1)) yield i;
}

/** Whether `data[start, end)` mixes upper case, lower case and digits, as generated tokens do (placeholders don't). */
function isMixed(data: Buffer, start: number, end: number): boolean {
  let upper = false;
  let lower = false;
  let digit = false;
  for (let i = start; i < end; i++) {
    const c = data[i] as number;
    upper ||= isUpper(c);
    lower ||= isLower(c);
    digit ||= isDigit(c);
  }
  return upper && lower && digit;
}

/** The end of the run of bytes matching `test` from `start`, looking at most `max` bytes. */
function runEnd(data: Buffer, start: number, test: (c: number) => boolean, max: number): number {
  const limit = Math.min(data.length, start + max);
  let i = start;
  while (i < limit && test(data[i] as number)) i++;
  return i;
}

/**
 * `-----BEGIN … PRIVATE KEY-----` (PEM, OpenSSH, PGP `… PRIVATE KEY BLOCK-----`) followed within a few lines
 * by a line of base64: a key, not a sentence about one or a `...` placeholder.
 */
function hasPrivateKey(data: Buffer): boolean {
  for (const i of occurrences(data, "PRIVATE KEY")) {
    const before = data.subarray(Math.max(0, i - 48), i);
    const begin = before.lastIndexOf("-----BEGIN ");
    if (begin < 0 || before.indexOf(LF, begin) >= 0) continue;
    let end = i + 11;
    if (data.subarray(end, end + 6).equals(BLOCK)) end += 6;
    if (!data.subarray(end, end + 5).equals(DASHES)) continue;
    if (hasBase64Line(data, end + 5)) return true;
  }
  return false;
}

/** Whether one of the (at most 6) lines after the one holding `from` is at least 40 base64 bytes. */
function hasBase64Line(data: Buffer, from: number): boolean {
  let line = from;
  for (let n = 0; n < 7 && line < data.length; n++) {
    const end = runEnd(data, line, isBase64, 128);
    const next = at(data, end);
    if (n > 0 && end - line >= 40 && (next === LF || next === CR || next === -1 || end - line === 128))
      return true;
    // On to the next line, within 128 bytes (headers such as Proc-Type or Version are short).
    const newline = data.subarray(end, Math.min(data.length, line + 128)).indexOf(LF);
    if (newline < 0) return false;
    line = end + newline + 1;
  }
  return false;
}

/** An access key id (AKIA/ASIA + 16 upper-case letters or digits) with a 40-byte secret-shaped neighbour. */
function hasAwsKeyPair(data: Buffer): boolean {
  const ids: number[] = [];
  for (const anchor of ["AKIA", "ASIA"])
    for (const i of occurrences(data, anchor)) {
      if (isAlnum(at(data, i - 1)) || isAlnum(at(data, i + 20))) continue;
      if (runEnd(data, i + 4, (c) => isUpper(c) || isDigit(c), 16) === i + 20) ids.push(i);
    }
  if (ids.length === 0) return false;
  // One pass over the secrets (standalone runs of exactly 40 base64 bytes mixing cases and digits), each
  // checked against the nearest id: linear whatever the number of either.
  ids.sort((a, b) => a - b);
  let nearest = 0;
  const isSecretByte = (c: number) => isAlnum(c) || c === 43 || c === 47;
  for (let i = 0; i < data.length; ) {
    if (!isSecretByte(data[i] as number)) {
      i++;
      continue;
    }
    const end = runEnd(data, i, isSecretByte, data.length - i);
    if (end - i === 40 && isMixed(data, i, end)) {
      while (nearest + 1 < ids.length && (ids[nearest + 1] as number) < i) nearest++;
      const close = (id: number | undefined) => id !== undefined && Math.abs(id - i) <= 1024;
      if (close(ids[nearest]) || close(ids[nearest + 1])) return true;
    }
    i = end;
  }
  return false;
}

/** `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` + 36 letters and digits, or `github_pat_` + 82 word bytes. */
function hasGitHubToken(data: Buffer): boolean {
  // One search for "gh" (not one per prefix): the cost of a native search is that of its first byte's matches.
  for (const i of occurrences(data, "gh")) {
    if (!GITHUB_KINDS.includes(at(data, i + 2)) || at(data, i + 3) !== UNDERSCORE) continue;
    const start = i + 4;
    if (isBase64Url(at(data, i - 1)) || runEnd(data, start, isAlnum, 37) !== start + 36) continue;
    if (!isBase64Url(at(data, start + 36)) && isMixed(data, start, start + 36)) return true;
  }
  for (const j of occurrences(data, "_pat_")) {
    const i = j - 6;
    if (i < 0 || !data.subarray(i, j).equals(GITHUB)) continue;
    const start = j + 5;
    const isWord = (c: number) => isAlnum(c) || c === UNDERSCORE;
    if (isBase64Url(at(data, i - 1)) || runEnd(data, start, isWord, 83) !== start + 82) continue;
    if (isMixed(data, start, start + 82)) return true;
  }
  return false;
}

/** `xox[abposr]-` + a numeric team or user id of 8+ digits + more dash-separated parts (24+ bytes in all). */
function hasSlackToken(data: Buffer): boolean {
  for (const i of occurrences(data, "xox")) {
    if (!"abposr".includes(String.fromCharCode(at(data, i + 3))) || at(data, i + 4) !== 45) continue;
    if (isAlnum(at(data, i - 1))) continue;
    const digitsEnd = runEnd(data, i + 5, isDigit, 32);
    if (digitsEnd - (i + 5) < 8 || at(data, digitsEnd) !== 45) continue;
    const end = runEnd(data, digitsEnd, (c) => isAlnum(c) || c === 45, 256);
    if (end - (i + 5) >= 24) return true;
  }
  return false;
}

/** JSON of a base64url segment, or undefined. */
function segmentJson(data: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(Buffer.from(data.toString("latin1", start, end), "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

/**
 * A signed JWT that looks issued, not illustrative: a header with an `alg` other than `none`, a payload with a
 * numeric `exp`, a signature of 32+ bytes. Candidates start at a token boundary, so their runs never overlap.
 */
function hasJwt(data: Buffer): boolean {
  // "yJ", then the "e" before it: a search starting on the rare "y" is several times faster than on "e".
  for (const j of occurrences(data, "yJ")) {
    const i = j - 1;
    if (at(data, i) !== 101) continue;
    const previous = at(data, i - 1);
    if (isBase64Url(previous) || previous === 46) continue;
    const headerEnd = runEnd(data, i, isBase64Url, 1024);
    if (at(data, headerEnd) !== 46) continue;
    const payloadEnd = runEnd(data, headerEnd + 1, isBase64Url, 16_384);
    if (at(data, payloadEnd) !== 46) continue;
    const signatureEnd = runEnd(data, payloadEnd + 1, isBase64Url, 1024);
    if (signatureEnd - payloadEnd - 1 < 32) continue;
    const header = segmentJson(data, i, headerEnd) as { alg?: unknown } | undefined;
    if (typeof header?.alg !== "string" || header.alg.toLowerCase() === "none") continue;
    const payload = segmentJson(data, headerEnd + 1, payloadEnd) as { exp?: unknown } | undefined;
    if (typeof payload?.exp === "number") return true;
  }
  return false;
}

const DETECTORS: readonly [SecretKind, (data: Buffer) => boolean][] = [
  ["private key", hasPrivateKey],
  ["AWS access key", hasAwsKeyPair],
  ["GitHub token", hasGitHubToken],
  ["Slack token", hasSlackToken],
  ["JWT", hasJwt],
];

/**
 * The first kind of high-confidence secret in a document's bytes, or undefined. Linear in the length: anchors
 * come from native substring search, and each candidate is checked within a bounded number of bytes.
 */
export function findSecret(data: Buffer): SecretKind | undefined {
  for (const [kind, detect] of DETECTORS) if (detect(data)) return kind;
  return undefined;
}
