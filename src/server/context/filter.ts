// What never enters the catalogue: secrets, credentials, cloud state, keys, VCS internals, binary or invalid text.
import { isUtf8 } from "node:buffer";
import { SkipError, type SkipReason } from "./skip.js";

/** Largest document accepted (seed 000: 8 MiB). */
export const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

const VCS_DIRS = new Set([".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"]);

/** Directories whose whole content is credentials or cloud state. */
const SENSITIVE_DIRS = new Set([
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".gcloud",
  ".kube",
  ".docker",
  ".terraform",
  ".password-store",
]);

const SENSITIVE_FILES: readonly RegExp[] = [
  /^\.env(\..*)?$/i,
  /\.env$/i,
  /^\.?(netrc|npmrc|pypirc|pgpass|git-credentials|htpasswd|dockercfg|s3cfg|boto)$/i,
  // Named like an SSH key whatever the extension (id_rsa.md, id_ed25519.txt, id_ecdsa_sk.pub).
  /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?(\..*)?$/i,
  /\.(pem|key|p12|pfx|jks|keystore|der|crt|cer|csr|kdbx|gpg|asc|ovpn|ppk)$/i,
  /^(credentials|credential|secrets?)(\.[a-z0-9]+)?$/i,
  // A config-shaped file named for secrets (secrets.yaml, prod-credentials.json); prose about secrets stays.
  /(^|[._-])(secrets?|credentials?|private[._-]?key|service[._-]?account)([._-][\w.-]*)?\.(json|ya?ml|toml|ini|conf|cfg|properties|xml|txt|env)$/i,
  /\.tfstate(\.backup)?$/i,
  /\.tfvars(\.json)?$/i,
  /^terraform\.tfstate.*$/i,
  /^kubeconfig$/i,
  /^\.vault[._-]?token$/i,
  /^token(s)?(\.[a-z]+)?$/i,
];

/** Whether a directory name is skipped entirely, and why. */
export function skipDirectory(name: string): SkipReason | undefined {
  if (VCS_DIRS.has(name)) return "vcs internals";
  if (SENSITIVE_DIRS.has(name)) return "sensitive file";
  return undefined;
}

/** Whether a file is skipped by its relative path alone, and why. */
export function skipByPath(relPath: string): SkipReason | undefined {
  const parts = relPath.split("/");
  for (const dir of parts.slice(0, -1)) {
    const reason = skipDirectory(dir);
    if (reason) return reason;
  }
  const name = parts.at(-1) ?? "";
  if (SENSITIVE_FILES.some((pattern) => pattern.test(name))) return "sensitive file";
  return undefined;
}

/** A control character other than tab, line feed, form feed and carriage return. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is looked for.
const CONTROL_CHARACTER = /[\u0000-\u0008\u000b\u000e-\u001f]/;

/** Decodes document bytes as UTF-8 text, refusing binary content and invalid encodings. */
export function decodeText(data: Buffer): string {
  if (data.indexOf(0) >= 0) throw new SkipError("binary content");
  if (!isUtf8(data)) throw new SkipError("invalid UTF-8");
  const text = data.toString("utf8");
  // Mostly control characters (other than whitespace) means a binary format that happens to decode. The
  // common case, none at all, is found by one native scan.
  const sample = text.slice(0, 8192);
  if (CONTROL_CHARACTER.test(sample)) {
    let control = 0;
    for (let i = 0; i < sample.length; i++) {
      const code = sample.charCodeAt(i);
      if (code < 32 && code !== 9 && code !== 10 && code !== 13 && code !== 12) control += 1;
    }
    if (control / sample.length > 0.1) throw new SkipError("binary content");
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
