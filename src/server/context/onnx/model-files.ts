// The operator's model folder, verified: every file ivoai loads is pinned by SHA-256 in server.toml, read once,
// hashed, and handed on as those same bytes (no second read a swap could slip into). Nothing is downloaded.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { errnoCode, IvoaiError } from "../../../shared/errors.js";

export const TOKENIZER_FILE = "tokenizer.json";

export interface ModelFilesOptions {
  modelDir: string;
  modelFile: string;
  /** File name in modelDir → SHA-256 (hex). */
  pins: Readonly<Record<string, string>>;
}

export interface VerifiedModelFiles {
  model: Buffer;
  tokenizer: string;
}

const short = (digest: string) => `${digest.slice(0, 12).toLowerCase()}…`;

function configError(message: string, data: Record<string, unknown>): IvoaiError {
  return new IvoaiError("CONFIG_INVALID", message, { data });
}

/** A pin's name must stay inside the folder: no absolute path, no `..`, no `./` spelling. */
function checkName(name: string, modelDir: string): string {
  const normal = path.posix.normalize(name);
  if (path.isAbsolute(name) || normal !== name || normal.startsWith("../") || name === "..") {
    throw configError(`context.embedder.sha256: "${name}" is not a file name inside ${modelDir}`, {
      file: name,
    });
  }
  return path.join(modelDir, name);
}

/** Reads and verifies every pinned file; the model file and tokenizer.json must be among them. */
export async function readPinnedModelFiles(options: ModelFilesOptions): Promise<VerifiedModelFiles> {
  const { modelDir, pins } = options;
  const needed = [options.modelFile, TOKENIZER_FILE];
  const read = new Map<string, Buffer>();
  for (const name of new Set([...needed, ...Object.keys(pins)])) {
    const file = checkName(name, modelDir);
    let data: Buffer;
    try {
      data = await fs.readFile(file);
    } catch (error) {
      const code = errnoCode(error);
      if (code === "ENOENT")
        throw configError(`the embedding model file ${name} is missing from ${modelDir}`, { file: name });
      throw configError(
        `the embedding model file ${name} in ${modelDir} cannot be read (${code ?? "error"})`,
        {
          file: name,
        },
      );
    }
    const actual = createHash("sha256").update(data).digest("hex");
    const pinned = pins[name]?.toLowerCase();
    if (pinned === undefined) {
      throw configError(
        `the embedding model file ${name} is not pinned (sha256 ${short(actual)}): add it to [context.embedder.sha256]`,
        { file: name, actual },
      );
    }
    if (pinned !== actual) {
      throw configError(
        `the embedding model file ${name} does not match its pin: sha256 ${short(actual)}, pinned ${short(pinned)}`,
        { file: name, actual, pinned },
      );
    }
    read.set(name, data);
  }
  return {
    model: read.get(options.modelFile) as Buffer,
    tokenizer: (read.get(TOKENIZER_FILE) as Buffer).toString("utf8"),
  };
}

/** What the vectors depend on besides model name and dims: the pinned bytes and how texts are prepared. */
export function onnxFingerprint(parts: {
  pins: Readonly<Record<string, string>>;
  modelFile: string;
  queryPrefix: string;
  passagePrefix: string;
  maxLength: number;
}): string {
  const pins = Object.entries(parts.pins)
    .map(([name, digest]): [string, string] => [name, digest.toLowerCase()])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const identity = JSON.stringify([
    pins,
    parts.modelFile,
    parts.queryPrefix,
    parts.passagePrefix,
    parts.maxLength,
  ]);
  return createHash("sha256").update(identity).digest("hex").slice(0, 8);
}
