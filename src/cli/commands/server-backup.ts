// `ivoai server backup create|list|verify` and `ivoai server restore`: the operator's side of seed 000's backups.
import path from "node:path";
import { serverPaths } from "../../config/server-paths.js";
import {
  changeLines,
  createBackup,
  listBackups,
  type RestoreReport,
  restoreBackup,
  verifyBackup,
} from "../../server/backup/index.js";
import { BACKUP_STORES } from "../../server/stores.js";
import { IvoaiError } from "../../shared/errors.js";
import { defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { createProgress } from "../progress.js";
import { ROOT_OPTION, rootOf } from "./server-common.js";

const OUT_OPTION = {
  out: {
    type: "string" as const,
    value: "DIR",
    description: "directory that holds the backups (default var/lib/ivoai/backups under the root)",
  },
};

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(1)} GiB`;
}

const createCommand = defineCommand({
  name: "create",
  summary: "Write a consistent backup of config, context catalogue and memory (safe while the server runs)",
  description:
    "Writes a new 0700 directory ivoai-backup-<time>-<id> with manifest.json (format and ivoai version, store\n" +
    "schemas, size and SHA-256 per entry), server.toml, catalogue.sqlite (documents, chunks, connector\n" +
    "definitions), memory.sqlite (pages, versions, graph, episodes, approvals) and index-rebuild.json. Stores\n" +
    "are copied with SQLite's online backup. Never included: secrets and TLS keys, enrollment state and client\n" +
    "credentials, OAuth grants and tokens, the audit log, vector caches (rebuilt from the catalogue).\n" +
    "manifest.sig signs manifest.json (HMAC-SHA256) with this server's key, etc/ivoai/secrets/backup-signing.key\n" +
    "(0600, created by the first backup; never in a backup): verify and restore tell this server's backups apart.",
  json: true,
  options: { ...ROOT_OPTION, ...OUT_OPTION },
  async run(ctx) {
    const progress = createProgress();
    const out = ctx.options.out;
    let report: Awaited<ReturnType<typeof createBackup>>;
    try {
      report = await createBackup({
        paths: serverPaths(rootOf(ctx)),
        ...(out ? { outDir: path.resolve(out) } : {}),
        onProgress: (text) => progress.update(text),
      });
    } finally {
      progress.done();
    }
    ctx.out.data(
      {
        path: report.path,
        name: report.name,
        created_at: report.manifest.created_at,
        format_version: report.manifest.format_version,
        ivoai_version: report.manifest.ivoai_version,
        stores: report.manifest.stores,
        entries: report.manifest.entries,
        total_bytes: report.total_bytes,
        excluded: report.manifest.excluded,
      },
      (r) =>
        [
          `backup written: ${r.path}`,
          formatTable(
            ["ENTRY", "SIZE", "SHA-256"],
            r.entries.map((entry) => [entry.path, bytes(entry.size), entry.sha256.slice(0, 16)]),
          ),
          `total ${bytes(r.total_bytes)}; not included: secrets, enrollment, OAuth, audit log, vector caches`,
        ].join("\n"),
    );
    return 0;
  },
});

const listCommand = defineCommand({
  name: "list",
  summary: "List the backups in the backup directory, newest first",
  json: true,
  options: { ...ROOT_OPTION, ...OUT_OPTION },
  async run(ctx) {
    const out = ctx.options.out;
    const dir = out ? path.resolve(out) : serverPaths(rootOf(ctx)).backupsDir;
    const backups = await listBackups(dir);
    ctx.out.data({ directory: dir, backups }, (r) =>
      formatTable(
        ["NAME", "CREATED", "IVOAI", "FORMAT", "SIZE", "STATUS"],
        r.backups.map((row) => [
          row.name,
          row.created_at ?? "-",
          row.ivoai_version ?? "-",
          row.format_version === null ? "-" : String(row.format_version),
          bytes(row.total_bytes),
          row.valid ? "ok (run verify for hashes)" : (row.problem ?? "invalid"),
        ]),
        `no backups in ${r.directory}: create one with 'ivoai server backup create'`,
      ),
    );
    return 0;
  },
});

const verifyCommand = defineCommand({
  name: "verify",
  summary:
    "Check a backup: manifest, every entry's size and SHA-256, SQLite integrity and schema, its signature",
  description:
    "Checks the manifest, every entry's size and SHA-256, SQLite's integrity_check and that each store holds only\n" +
    "the schema ivoai creates; then the signature (HMAC-SHA256 over manifest.json) against the signing key of the\n" +
    "server at --root (etc/ivoai/secrets/backup-signing.key): 'signed by this server', unsigned, or another\n" +
    "server's. A signature that names this server's key and does not match fails. It proves the files are\n" +
    "those this server wrote when signed by it; it does not prove the data was right when backed up.",
  json: true,
  positionals: [{ name: "PATH", description: "the backup directory", required: true }],
  options: ROOT_OPTION,
  async run(ctx) {
    const dir = path.resolve(ctx.positionals[0] ?? "");
    const paths = serverPaths(rootOf(ctx));
    const progress = createProgress();
    progress.update(`verifying ${dir}`);
    try {
      const backup = await verifyBackup(dir, { paths, integrity: true, stores: BACKUP_STORES });
      ctx.out.data(
        {
          path: backup.path,
          valid: true,
          signature: backup.signature,
          created_at: backup.manifest.created_at,
          format_version: backup.manifest.format_version,
          ivoai_version: backup.manifest.ivoai_version,
          stores: backup.manifest.stores,
          entries: backup.entries.map(({ path: name, kind, size, sha256 }) => ({
            path: name,
            kind,
            size,
            sha256,
          })),
        },
        (r) =>
          [
            `backup ${r.path} is valid: ${r.entries.length} entries, made by ivoai ${r.ivoai_version} at ${r.created_at}`,
            r.signature.status === "this_server"
              ? `signature: ${r.signature.detail}`
              : `warning: NOT signed by the server at ${paths.root}: ${r.signature.detail} (restore needs --allow-unsigned)`,
          ].join("\n"),
      );
    } finally {
      progress.done();
    }
    return 0;
  },
});

export const serverBackupGroup: GroupSpec = {
  kind: "group",
  name: "backup",
  summary: "Create, list and verify backups of this server",
  children: [createCommand, listCommand, verifyCommand],
};

export const serverRestoreCommand = defineCommand({
  name: "restore",
  summary: "Restore a backup's data into this server tree (server stopped; merges, never deletes)",
  description:
    "Verifies the whole backup first (format version, entry names and bounds, links, SHA-256, integrity, and\n" +
    "that each store's schema holds only the tables and indexes ivoai creates) and its signature, and writes\n" +
    "nothing if anything is wrong. A backup this server did not sign (unsigned, or another server's key) needs\n" +
    "--allow-unsigned. Then merges the stores, each in one transaction: a store that does not exist is created\n" +
    "fresh and filled with the backup's rows; one that does keeps all its rows and gains the backup's missing ones.\n" +
    "The target's server.toml (listener, TLS, proxies, public URL, limits, embedder, …) and connectors are kept:\n" +
    "restore prints what the backup would change, and --apply-config / --apply-connectors take it. A tree with\n" +
    "no server.toml needs --apply-config (or 'server init' first). --dry-run shows all this and writes nothing.\n" +
    "As root, written files keep the owner of the file they replace (new ones get their directory's). Never\n" +
    "restores secrets. Refused while the server for this root runs; holds the server's start lock while it writes.",
  json: true,
  positionals: [{ name: "PATH", description: "absolute path of the backup directory", required: true }],
  options: {
    ...ROOT_OPTION,
    "apply-config": {
      type: "boolean",
      description: "write the backup's server.toml over this server's (shown first; kept otherwise)",
    },
    "apply-connectors": {
      type: "boolean",
      description: "add the backup's connectors this server lacks, with their documents",
    },
    "allow-unsigned": {
      type: "boolean",
      description: "restore a backup this server did not sign (unsigned, or another server's key)",
    },
    "dry-run": { type: "boolean", description: "verify and show what would change; write nothing" },
  },
  async run(ctx) {
    const source = ctx.positionals[0] ?? "";
    if (!path.isAbsolute(source)) {
      throw new IvoaiError(
        "USAGE",
        `PATH must be absolute (got '${source}'): restore reads only an explicit local path`,
      );
    }
    const progress = createProgress();
    let report: Awaited<ReturnType<typeof restoreBackup>>;
    try {
      report = await restoreBackup({
        paths: serverPaths(rootOf(ctx)),
        source,
        stores: BACKUP_STORES,
        applyConfig: ctx.options["apply-config"] === true,
        applyConnectors: ctx.options["apply-connectors"] === true,
        allowUnsigned: ctx.options["allow-unsigned"] === true,
        dryRun: ctx.options["dry-run"] === true,
        onProgress: (text) => progress.update(text),
      });
    } finally {
      progress.done();
    }
    ctx.out.data(report, renderRestore);
    return 0;
  },
});

function renderRestore(r: RestoreReport): string {
  const rows = r.restored.map((row) => [
    row.entry,
    r.dry_run ? `would be ${row.action}` : row.action,
    row.added
      ? Object.entries(row.added)
          .map(([what, n]) => `${what} ${n}`)
          .join(", ")
      : "-",
    row.target,
  ]);
  return [
    r.dry_run
      ? `dry run: nothing written; restoring ${r.source} into ${r.root} would do this`
      : `restored ${r.source} into ${r.root}`,
    `signature: ${r.signature.detail}`,
    formatTable(["ENTRY", "ACTION", "ADDED", "TARGET"], rows),
    ...(r.config.action === "written"
      ? [`server.toml written from the backup: ${changeLines(r.config.changes).join("; ") || "no change"}`]
      : []),
    ...(r.blocked.length > 0 ? ["would refuse:", ...r.blocked.map((why) => `  ${why}`)] : []),
    ...(r.not_restored.length > 0 ? ["NOT restored:", ...r.not_restored.map((what) => `  ${what}`)] : []),
    "next:",
    ...r.next_steps.map((step) => `  ${step}`),
  ].join("\n");
}
