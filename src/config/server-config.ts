// The server's non-secret TOML settings: schema, defaults, load and atomic save.
import { promises as fs } from "node:fs";
import path from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { z } from "zod";
import { writeFileAtomic } from "../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../shared/errors.js";
import { durationSetting, sizeSetting } from "./setting-types.js";

/** How stored vectors are kept: int8 with one scale per vector (a quarter of the size), or float32. */
const vectorFormat = z.enum(["int8", "float32"]).default("int8");

const onnxEmbedderSchema = z.object({
  provider: z.literal("onnx"),
  /** The operator's model folder: the ONNX file and the Hugging Face tokenizer.json (nothing is downloaded). */
  model_dir: z.string().refine((dir) => path.isAbsolute(dir), "model_dir must be an absolute path"),
  model: z.string().default("intfloat/multilingual-e5-small"),
  /** The ONNX file inside model_dir. */
  model_file: z.string().default("model.onnx"),
  /** SHA-256 of every file ivoai loads from model_dir, by its name there; checked before each load. */
  sha256: z
    .record(z.string(), z.string().regex(/^[0-9a-fA-F]{64}$/, "a pin is 64 hex digits (sha256sum)"))
    .default({}),
  dims: z.number().int().positive().default(384),
  /** Tokens per text, special tokens included (longer texts are cut). */
  max_length: z.number().int().min(2).max(8192).default(512),
  query_prefix: z.string().default("query: "),
  passage_prefix: z.string().default("passage: "),
  batch_size: z.number().int().positive().max(1024).default(16),
  /** onnxruntime's intra-op threads (0: its default, one per core). */
  threads: z.number().int().min(0).max(256).default(1),
  vector_format: vectorFormat,
});

const embedderSchema = z.discriminatedUnion("provider", [
  z.object({ provider: z.literal("none") }),
  z.object({
    provider: z.literal("tei"),
    url: z.string().url(),
    model: z.string().default("intfloat/multilingual-e5-small"),
    dims: z.number().int().positive().default(384),
    timeout_ms: z.number().int().positive().default(30_000),
    vector_format: vectorFormat,
  }),
  onnxEmbedderSchema,
  // Earlier releases' transformers.js provider: refused with what to write instead.
  z
    .object({ provider: z.literal("local") })
    .loose()
    .refine(() => false, {
      message:
        'provider "local" was replaced by "onnx": write provider = "onnx", model_dir and sha256 = { "model.onnx" = "…", "tokenizer.json" = "…" } (see the README)',
    }),
  z.object({
    provider: z.literal("corpus"),
    /** LSA axes; defaults tuned on the dev sets (bench/results/tune-corpus.md). */
    dims: z.number().int().min(8).max(1024).default(128),
    min_df: z.number().int().min(1).default(1),
    max_df_ratio: z.number().gt(0).max(1).default(0.5),
    weighting: z.enum(["tfidf", "log-entropy"]).default("tfidf"),
    sigma_power: z.number().min(0).max(2).default(1),
    power_iterations: z.number().int().min(0).max(10).default(2),
    max_vocabulary: z.number().int().positive().default(60_000),
    /** Retrain when the chunk count moved this share from the trained one (0.25: +25 %). */
    retrain_growth: z.number().gt(0).default(0.25),
    train_sample: z.number().int().positive().default(20_000),
    min_chunks: z.number().int().min(2).default(20),
    /** LSA vectors are small; float32 keeps their minor axes exact (int8 is a quarter of the bytes). */
    vector_format: z.enum(["int8", "float32"]).default("float32"),
  }),
]);

const fusionSchema = z
  .object({
    /** Reciprocal-rank-fusion constant (default 100 with the corpus embedder, 60 with a model). */
    rrf_k: z.number().positive().optional(),
    /** The vector ranking's weight against the lexical ranking's 1 (default 0.2 with corpus, 1 with a model). */
    vector_weight: z.number().min(0).optional(),
    /** Candidates from each ranking: limit × depth_factor + 20. */
    depth_factor: z.number().int().min(1).max(50).default(4),
  })
  .prefault({});

export const contextConfigSchema = z
  .object({
    /** Aggregate limits of one ingest run. */
    max_documents: z.number().int().positive().default(200_000),
    max_bytes: sizeSetting().prefault("4GiB"),
    max_chunks: z.number().int().positive().default(2_000_000),
    embedder: embedderSchema.default({ provider: "none" }),
    fusion: fusionSchema,
  })
  .prefault({});

export const serverConfigSchema = z.object({
  server: z.object({
    public_url: z.string(),
    listen: z.string().default("127.0.0.1:8787"),
    /** Source CIDRs of a reverse proxy that terminates TLS; requests must carry X-Forwarded-Proto: https. */
    trusted_proxy_cidrs: z.array(z.string()).default([]),
    /** Serve TLS directly with the copies under etc/ivoai/secrets/tls. */
    tls: z.boolean().default(false),
  }),
  limits: z
    .object({
      max_body_bytes: sizeSetting().prefault("4MiB"),
      headers_timeout_ms: z.number().int().positive().default(10_000),
      request_timeout_ms: z.number().int().positive().default(30_000),
      idle_timeout_ms: z.number().int().positive().default(60_000),
      keep_alive_timeout_ms: z.number().int().positive().default(5_000),
      drain_timeout_ms: z.number().int().positive().default(10_000),
    })
    .prefault({}),
  enrollment: z
    .object({
      /** How long an enrollment code lasts unless `enrollment create --ttl` says otherwise. */
      default_ttl: durationSetting("10m").prefault("10m"),
      attempts_per_minute: z.number().int().positive().default(30),
    })
    .prefault({}),
  context: contextConfigSchema,
  oauth: z
    .object({
      /** Absolute lifetime of a Web MCP grant (refresh family): refresh rotation cannot extend it. */
      refresh_family_ttl: durationSetting("90d").prefault("90d"),
    })
    .prefault({}),
  console: z
    .object({
      /** A web console session ends after this long without a request. */
      idle_timeout: durationSetting("30m").prefault("30m"),
      /** A web console session ends this long after sign-in, however active. */
      absolute_timeout: durationSetting("12h").prefault("12h"),
    })
    .prefault({}),
  store: z
    .object({
      /** Where the stores live: SQLite files (default) or one PostgreSQL (its URL in etc/ivoai/secrets/postgres.url). */
      backend: z.enum(["sqlite", "postgres"]).default("sqlite"),
    })
    .prefault({}),
  memory: z
    .object({
      /** Pending approval requests expire after this long. */
      approval_ttl: durationSetting("7d").prefault("7d"),
      /** How often expired pages and requests are swept. */
      sweep_interval: durationSetting("60s").prefault("60s"),
      /** Unexpired pending approval requests one credential may have at once; more are refused. */
      max_pending_approvals_per_client: z.number().int().positive().default(50),
      /**
       * Weight of the pages' vector ranking (the context embedder's model, onnx or tei) against the lexical
       * ranking's 1; 0 keeps memory lexical. The corpus embedder is never used for memory: fused, it lowered
       * FriendsQA recall at every weight measured (bench/results/memory.md).
       */
      vector_weight: z.number().min(0).default(1),
    })
    .prefault({}),
});

/** The settings as the code uses them: durations in milliseconds, sizes in bytes. */
export type ServerConfig = z.output<typeof serverConfigSchema>;

const HEADER = "# ivoai server settings (non-secret). Secrets live under etc/ivoai/secrets.\n";

export async function loadServerConfig(file: string): Promise<ServerConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      throw new IvoaiError(
        "CONFIG_MISSING",
        `no server configuration at ${file}: run 'ivoai server init' first`,
      );
    }
    throw error;
  }
  return parseServerConfig(text, file);
}

export function parseServerConfig(text: string, file: string): ServerConfig {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    throw new IvoaiError(
      "CONFIG_INVALID",
      `${file} is not valid TOML: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  const parsed = serverConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IvoaiError(
      "CONFIG_INVALID",
      `${file}: ${issue?.path.join(".") || "(root)"}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/** The settings as people type them (7d, 4MiB): what a saved file holds and what a diff of two configs shows. */
export function encodeServerConfig(config: ServerConfig): z.input<typeof serverConfigSchema> {
  return z.encode(serverConfigSchema, config);
}

export async function saveServerConfig(file: string, config: ServerConfig): Promise<void> {
  await writeFileAtomic(file, HEADER + stringifyToml(encodeServerConfig(config)), { mode: 0o640 });
}
