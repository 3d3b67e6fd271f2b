// Doctor's embedder line: which provider runs, with what model and vectors, and for onnx whether the pinned files
// still match and onnxruntime-node loads. Read-only: files are hashed as streams, nothing is embedded.
import type { ServerConfig } from "../../config/server-config.js";
import type { CorpusVectorRetriever } from "../context/corpus-vectors.js";
import { type ModelFilesOptions, verifyPinnedModelFiles } from "../context/onnx/model-files.js";
import type { VectorRetriever, VectorStanding } from "../context/vectors.js";
import type { MemoryVectors } from "../memory/vectors.js";
import type { DoctorCheck } from "./doctor.js";

type EmbedderConfig = ServerConfig["context"]["embedder"];

const NAME = "embedder";

/** `1,234 int8 vectors in NAME`, or that none are loaded yet. */
function describeVectors(
  vectors: { standing(): VectorStanding } | undefined,
  loads = "the first search or ingest loads them",
): string {
  const standing = vectors?.standing();
  if (!standing) return "no vector index";
  const count =
    standing.vectors === undefined
      ? `vectors not loaded yet (${loads})`
      : `${standing.vectors.toLocaleString("en-US")} ${standing.format} vectors`;
  return `${standing.dims} dims, ${count} in ${standing.name}`;
}

/**
 * Doctor's memory_ranking line: whether memory_query fuses the pages' vectors with its lexical ranking, and if
 * not, which setting keeps it lexical.
 */
export function checkMemoryRanking(
  config: Pick<ServerConfig, "context" | "memory">,
  vectors: MemoryVectors | undefined,
  memoryOpen: boolean,
): DoctorCheck {
  const name = "memory_ranking";
  const { provider } = config.context.embedder;
  const lexical = (why: string): DoctorCheck => ({ name, status: "ok", detail: `lexical only: ${why}` });
  if (!memoryOpen) return { name, status: "warn", detail: "the memory service is not open" };
  if (provider === "none" || provider === "local") return lexical("no embedding model ([context.embedder])");
  if (provider === "corpus")
    return lexical(
      "the corpus embedder is not used for memory (fused, it lowered recall in every measurement)",
    );
  if (config.memory.vector_weight === 0 || !vectors) return lexical("[memory] vector_weight = 0");
  return {
    name,
    status: "ok",
    detail: `lexical fused with ${provider} vectors at weight ${config.memory.vector_weight}, ${describeVectors(vectors, "they are embedded in the background after start")}`,
  };
}

export async function checkEmbedder(
  config: EmbedderConfig,
  vectors: VectorRetriever | CorpusVectorRetriever | undefined,
): Promise<DoctorCheck> {
  switch (config.provider) {
    case "none":
      return { name: NAME, status: "ok", detail: "none: lexical search only ([context.embedder] provider)" };
    case "tei":
      return {
        name: NAME,
        status: "ok",
        detail: `tei ${config.model} at ${new URL(config.url).origin}, ${describeVectors(vectors)}`,
      };
    case "corpus": {
      const trained = vectors !== undefined && (!("model" in vectors) || vectors.model() !== undefined);
      return {
        name: NAME,
        status: "ok",
        detail: trained
          ? `corpus (learned from the catalogue), ${describeVectors(vectors)}`
          : `corpus (learned from the catalogue): not trained yet, it needs ${config.min_chunks.toLocaleString("en-US")} chunks; lexical search meanwhile`,
      };
    }
    case "onnx":
      return checkOnnx(config, vectors);
    case "local":
      return { name: NAME, status: "fail", detail: 'provider "local" was replaced by "onnx"' };
  }
}

/**
 * Doctor calls verifying the same folder and pins at once share one pass: a model file is hundreds of MB, and any
 * holder of doctor:read can ask as often as they like.
 */
const verifying = new Map<string, Promise<void>>();

function verifyOnce(options: ModelFilesOptions): Promise<void> {
  const key = JSON.stringify([options.modelDir, options.modelFile, options.pins]);
  let running = verifying.get(key);
  if (!running) {
    running = verifyPinnedModelFiles(options).finally(() => verifying.delete(key));
    verifying.set(key, running);
  }
  return running;
}

async function checkOnnx(
  config: Extract<EmbedderConfig, { provider: "onnx" }>,
  vectors: VectorRetriever | undefined,
): Promise<DoctorCheck> {
  const head = `onnx ${config.model} from ${config.model_dir}`;
  const { importOnnxRuntime, ONNXRUNTIME_VERSION } = await import("../context/onnx/onnx-embedder.js");
  try {
    await verifyOnce({ modelDir: config.model_dir, modelFile: config.model_file, pins: config.sha256 });
  } catch (error) {
    return { name: NAME, status: "fail", detail: `${head}: ${(error as Error).message}` };
  }
  let runtime: string;
  try {
    const ort = await importOnnxRuntime();
    runtime = ort.env.versions.node ?? "unknown";
  } catch (error) {
    return { name: NAME, status: "fail", detail: `${head}: ${(error as Error).message}` };
  }
  const pin = (config.sha256[config.model_file] ?? "").slice(0, 12).toLowerCase();
  const detail = `${head} (${config.model_file} sha256 ${pin}…, ${Object.keys(config.sha256).length} files match their pins), ${describeVectors(vectors)}; onnxruntime-node ${runtime} loads`;
  if (runtime !== ONNXRUNTIME_VERSION)
    return { name: NAME, status: "warn", detail: `${detail} (ivoai is tested with ${ONNXRUNTIME_VERSION})` };
  return { name: NAME, status: "ok", detail };
}
