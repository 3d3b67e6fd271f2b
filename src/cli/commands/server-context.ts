// `ivoai server connector …`, `ivoai server ingest`, `ivoai server search`

import type { ServerPaths } from "../../config/server-paths.js";
import type { IngestSummary } from "../../server/context/ingest.js";
import { MAX_SEARCH_RESULTS, type SearchHit } from "../../server/context/search.js";
import type { ConnectorSummary, ContextService } from "../../server/context/service.js";
import { contextSearchData } from "../../server/context/tools.js";
import { readPidFile } from "../../server/ops/pid-file.js";
import { oneLine } from "../../shared/terminal-text.js";
import { type CommandContext, type CommandSpec, defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { createProgress } from "../progress.js";
import { ROOT_OPTION, withContext } from "./server-common.js";

const addCommand = defineCommand({
  name: "add",
  summary: "Register a document source (a folder or an existing git checkout)",
  json: true,
  positionals: [{ name: "NAME", description: "connector name (lowercase, digits, - and _)", required: true }],
  options: {
    ...ROOT_OPTION,
    type: {
      type: "enum",
      value: "TYPE",
      choices: ["filesystem", "git"],
      required: true,
      description: "kind of source",
    },
    path: {
      type: "string",
      value: "DIR",
      required: true,
      description: "absolute path of the folder or checkout",
    },
    "allow-hardlinks": {
      type: "boolean",
      description:
        "also index files with several hard links (skipped by default: one may be outside the folder)",
    },
  },
  async run(ctx) {
    const { type, path: dir } = ctx.options;
    const record = await withContext(ctx, (context) =>
      context.addConnector({
        name: ctx.positionals[0] ?? "",
        type,
        path: dir,
        allowHardlinks: ctx.options["allow-hardlinks"] === true,
      }),
    );
    ctx.out.data(
      record,
      (r) => `connector ${r.name} (${r.type}) added for ${r.path}; run 'ivoai server ingest ${r.name}'`,
    );
    return 0;
  },
});

const listCommand = defineCommand({
  name: "list",
  summary: "List connectors with their document counts",
  json: true,
  options: ROOT_OPTION,
  async run(ctx) {
    const connectors = await withContext(ctx, (context) => context.listConnectors());
    ctx.out.data({ connectors }, ({ connectors: rows }) =>
      formatTable(
        ["NAME", "TYPE", "DOCUMENTS", "LAST INGEST", "PATH"],
        rows.map((row: ConnectorSummary) => [
          row.name,
          row.type,
          String(row.documents),
          row.last_ingest_at ?? "never",
          row.path,
        ]),
        'no connectors: add one with "ivoai server connector add NAME --type filesystem --path DIR"',
      ),
    );
    return 0;
  },
});

const removeCommand = defineCommand({
  name: "remove",
  summary: "Remove a connector: its documents and index entries first, then its registration",
  json: true,
  positionals: [{ name: "NAME", description: "connector name", required: true }],
  options: ROOT_OPTION,
  async run(ctx) {
    const name = ctx.positionals[0] ?? "";
    const result = await withContext(ctx, (context) => context.removeConnector(name));
    ctx.out.data(
      { name, ...result },
      (r) => `connector ${r.name} removed with ${r.removed_documents} documents`,
    );
    return 0;
  },
});

export const serverConnectorGroup: GroupSpec = {
  kind: "group",
  name: "connector",
  summary: "Manage the document sources of the context service",
  children: [addCommand, listCommand, removeCommand],
};

export const serverIngestCommand = defineCommand({
  name: "ingest",
  summary: "Index connectors' documents (all, or the one named); safe while the server runs",
  description:
    "Reads each connector's files (secrets, binaries, special files, symbolic links, hard links unless the\n" +
    "connector allows them, directories over 64 levels deep and files over 8 MiB are skipped with a reason),\n" +
    "replaces changed documents atomically and removes vanished ones. Last, unless a gateway serves the tree\n" +
    "(it keeps the index itself), it saves the search index's snapshot, which the next server start loads\n" +
    "instead of rebuilding the index. Exit 1 if a connector could not be enumerated completely.",
  json: true,
  positionals: [{ name: "NAME", description: "only this connector" }],
  options: ROOT_OPTION,
  async run(ctx) {
    const progress = createProgress(process.stderr, process.stderr.isTTY === true && !ctx.json);
    const { summaries, connectors, index } = await withContext(ctx, async (context, paths) => {
      const summaries = await context.ingest(ctx.positionals, (p) =>
        progress.update(
          `ingest ${p.connector}: ${p.files} files, ${(p.bytes / 1e6).toFixed(1)} MB — ${p.relPath}`,
        ),
      );
      const index = await savedIndex(paths, context, () =>
        progress.update("ingest: saving the search index for the next start"),
      );
      return { summaries, connectors: await context.listConnectors(), index };
    });
    progress.done();
    const withHints = summaries.map((summary) => {
      const hint = emptySourceHint(
        summary,
        connectors.find((c) => c.name === summary.connector),
      );
      return hint ? { ...summary, hint } : summary;
    });
    const hint =
      summaries.length === 0
        ? 'there are no connectors to ingest: add one with "ivoai server connector add NAME --type filesystem --path DIR"'
        : undefined;
    ctx.out.data(
      { summaries: withHints, index, ...(hint ? { hint } : {}) },
      (value) => value.hint ?? [...value.summaries.map(renderSummary), renderIndex(value.index)].join("\n"),
    );
    return summaries.every((summary) => summary.complete) ? 0 : 1;
  },
});

type SavedIndex =
  | { saved: true; chunks: number; duration_ms: number }
  | { saved: false; running_pid: number }
  | { saved: false; error: string };

/**
 * The search index brought up to date and saved as its snapshot, so that the next `server start` loads it rather
 * than rebuilding it from every chunk. Not while a gateway serves this tree: it keeps the index current itself
 * (and saves it once enough changed), and a second copy here would only cost the time and memory. A snapshot is a
 * cache: one not written costs only a slower start.
 */
async function savedIndex(
  paths: ServerPaths,
  context: ContextService,
  onSaving: () => void,
): Promise<SavedIndex> {
  try {
    const gateway = await readPidFile(paths.pidFile);
    if (gateway.state === "running") return { saved: false, running_pid: gateway.record.pid };
    onSaving();
    return { ...(await context.saveIndex()), saved: true };
  } catch (error) {
    return { saved: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function renderIndex(index: SavedIndex): string {
  if (index.saved)
    return `search index: ${index.chunks} chunks saved for the next start in ${index.duration_ms} ms`;
  return "running_pid" in index
    ? `search index: kept current by the running gateway (pid ${index.running_pid})`
    : `search index not saved (${index.error}): the next start rebuilds it from the catalogue`;
}

/** Says so when a connector holds no documents after an ingest, with why its files were skipped. */
function emptySourceHint(
  summary: IngestSummary,
  connector: ConnectorSummary | undefined,
): string | undefined {
  if (!summary.complete || summary.added + summary.updated + summary.unchanged > 0) return undefined;
  const reasons = Object.entries(summary.skipped_by_reason)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(", ");
  const where = connector ? ` is ${connector.path} empty or filtered?` : "";
  return `connector ${summary.connector} produced no documents:${where} (${summary.skipped} skipped${reasons ? `: ${reasons}` : ""})`;
}

function renderSummary(s: IngestSummary & { hint?: string }): string {
  const reasons = Object.entries(s.skipped_by_reason)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(", ");
  const lines = [
    `${s.connector}: ${s.added} added, ${s.updated} updated, ${s.unchanged} unchanged, ${s.removed} removed, ` +
      `${s.skipped} skipped${reasons ? ` (${reasons})` : ""}; ${(s.bytes / 1e6).toFixed(2)} MB, ${s.chunks} new chunks in ${s.duration_ms} ms`,
  ];
  if (!s.complete) lines.push(`  incomplete: ${s.error ?? "enumeration failed"}; nothing was removed`);
  if (s.hint) lines.push(`  ${s.hint}`);
  return lines.join("\n");
}

/** What `server search` reaches beyond the process: the tree's index. A test passes a fake. */
export interface SearchCommandDeps {
  /** The hits for `query` and how many documents the index holds. */
  search(
    ctx: CommandContext,
    query: string,
    options: { limit: number; connector?: string },
  ): Promise<{ hits: SearchHit[]; documents: number }>;
}

/** The real index: the context service of the tree the command names. */
export const REAL_SEARCH_DEPS: SearchCommandDeps = {
  search: (ctx, query, options) =>
    withContext(ctx, async (context) => ({
      hits: await context.searcher.search(query, options),
      documents: (await context.catalogue.stats()).documents,
    })),
};

/** `server search` on `deps` (the real index unless a test passes a fake). */
export function createServerSearchCommand(deps: SearchCommandDeps = REAL_SEARCH_DEPS): CommandSpec {
  return defineCommand({
    name: "search",
    summary: "Search the indexed documents as an agent would",
    json: true,
    positionals: [{ name: "QUERY", description: "what to look for", required: true }],
    options: {
      ...ROOT_OPTION,
      limit: {
        type: "integer",
        value: "N",
        min: 1,
        max: MAX_SEARCH_RESULTS,
        default: 10,
        description: "results",
      },
      source: { type: "string", value: "NAME", description: "only this connector" },
    },
    async run(ctx) {
      const { limit, source } = ctx.options;
      const query = ctx.positionals[0] ?? "";
      const { hits, documents } = await deps.search(ctx, query, {
        limit,
        ...(source ? { connector: source } : {}),
      });
      const hint =
        documents === 0
          ? 'the index is empty: add a connector ("ivoai server connector add NAME --type filesystem --path DIR") and run "ivoai server ingest"'
          : undefined;
      ctx.out.data({ ...contextSearchData(query, hits), ...(hint ? { hint } : {}) }, (data) =>
        data.hint
          ? data.hint
          : data.results.length === 0
            ? "no matching documents"
            : data.results
                .map(
                  (r, i) =>
                    `${i + 1}. ${oneLine(r.title)} — ${oneLine(`${r.source}:${r.path}`)} (${r.score})\n   ${oneLine(r.snippet)}`,
                )
                .join("\n"),
      );
      return 0;
    },
  });
}

export const serverSearchCommand = createServerSearchCommand();
