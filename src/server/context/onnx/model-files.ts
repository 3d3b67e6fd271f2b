// The operator's model folder, verified: every file ivoai loads is pinned by SHA-256 in server.toml, read once,
// hashed, and handed on as those same bytes (no second read a swap could slip into). Nothing is downloaded.
import { createHash } from "node:crypto";
import { createReadStream, promises as fs } from "node:fs";
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

/** One file read for its pin: its digest, and its bytes when the caller keeps them. */
interface Read {
  digest: string;
  data?: Buffer;
}

async function readWhole(file: string): Promise<Read> {
  const data = await fs.readFile(file);
  return { digest: createHash("sha256").update(data).digest("hex"), data };
}

async function hashOnly(file: string): Promise<Read> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return { digest: hash.digest("hex") };
}

/** Every pinned file (and the model file and tokenizer.json, which must be among them) read and checked. */
async function checkPins(options: ModelFilesOptions, read: (file: string) => Promise<Read>) {
  const { modelDir, pins } = options;
  const needed = [options.modelFile, TOKENIZER_FILE];
  const checked = new Map<string, Read>();
  for (const name of new Set([...needed, ...Object.keys(pins)])) {
    const file = checkName(name, modelDir);
    let got: Read;
    try {
      got = await read(file);
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
    const actual = got.digest;
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
    checked.set(name, got);
  }
  return checked;
}

/** Reads and verifies every pinned file; the model file and tokenizer.json must be among them. */
export async function readPinnedModelFiles(options: ModelFilesOptions): Promise<VerifiedModelFiles> {
  const read = await checkPins(options, readWhole);
  const bytesOf = (name: string) => read.get(name)?.data ?? Buffer.alloc(0);
  return { model: bytesOf(options.modelFile), tokenizer: bytesOf(TOKENIZER_FILE).toString("utf8") };
}

/** The same checks without keeping the bytes (doctor: a model of hundreds of MB is hashed as a stream). */
export async function verifyPinnedModelFiles(options: ModelFilesOptions): Promise<void> {
  await checkPins(options, hashOnly);
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
