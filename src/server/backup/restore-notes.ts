// The sentences a restore reports: what it did not restore (and which flag would), what blocks it, what to run next.
import type { ServerConfig } from "../../config/server-config.js";
import type { ConfigChange, ConnectorPlan } from "./restore-plan.js";
import type { SignatureCheck } from "./signature.js";

/** A word of a shell command as the operator can paste it: plain, or single-quoted. */
export function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

const shown = (value: unknown) => (value === undefined ? "(not set)" : JSON.stringify(value));

/** One line per setting the backup would change, `key: target -> backup`. */
export function changeLines(changes: readonly ConfigChange[]): string[] {
  return changes.map((change) => `${change.key}: ${shown(change.target)} -> ${shown(change.backup)}`);
}

/** What the restore leaves out, each with the flag that would take it. */
export function notRestored(
  config: { action: string; changes: readonly ConfigChange[] },
  connectors: readonly ConnectorPlan[],
): string[] {
  const notes: string[] = [];
  if (config.action === "kept" && config.changes.length > 0) {
    notes.push(
      `server.toml: the target's settings are kept; the backup's would change ${config.changes.length} (pass --apply-config to take them): ${changeLines(config.changes).join("; ")}`,
    );
  }
  for (const plan of connectors) {
    const docs = `${plan.documents} document${plan.documents === 1 ? "" : "s"}`;
    const def = plan.backup
      ? `${plan.backup.type} ${JSON.stringify(plan.backup.path)}${plan.backup.allow_hardlinks ? ", hard links allowed" : ""}`
      : "";
    if (plan.action === "skip_new") {
      notes.push(
        `connector ${JSON.stringify(plan.name)} (${def}) and its ${docs}: the target has no such connector (pass --apply-connectors to add it; the next ingest reads its folder)`,
      );
    } else if (plan.action === "skip_differs") {
      notes.push(
        `connector ${JSON.stringify(plan.name)}: the target's reads ${JSON.stringify(plan.target?.path)}, the backup's ${def}; the target's is kept and the backup's ${docs} are not added`,
      );
    } else if (plan.action === "skip_orphan") {
      notes.push(
        `${docs} of connector ${JSON.stringify(plan.name)}, which neither the backup nor the target defines`,
      );
    }
  }
  return notes;
}

/** Why the restore will not go ahead without a flag, empty when it may. */
export function blockers(options: {
  signature: SignatureCheck;
  allowUnsigned: boolean;
  targetConfig: ServerConfig | undefined;
  applyConfig: boolean;
  root: string;
  configFile: string;
}): { reasons: string[]; flags: string[] } {
  const reasons: string[] = [];
  const flags: string[] = [];
  if (!options.targetConfig && !options.applyConfig) {
    reasons.push(
      `no server at ${options.root} (${options.configFile} missing): create it first with your own settings (ivoai server init --root ${shellWord(options.root)} --public-url URL), or take the backup's settings with --apply-config`,
    );
    flags.push("--apply-config");
  }
  if (options.signature.status !== "this_server" && !options.allowUnsigned) {
    reasons.push(`the backup is ${options.signature.detail}; pass --allow-unsigned to restore it anyway`);
    flags.push("--allow-unsigned");
  }
  return { reasons, flags };
}

/** What to run after a restore, each command as it works when pasted. */
export function nextSteps(root: string, config: ServerConfig | undefined, tlsInstalled: boolean): string[] {
  const r = shellWord(root);
  const init =
    config?.server.tls && !tlsInstalled
      ? `ivoai server init --root ${r} --tls-cert CERT.pem --tls-key KEY.pem   (the settings serve TLS; keys are never in a backup)`
      : `ivoai server init --root ${r}   (recreates enrollment state and secrets directories if missing)`;
  return [
    ...(config
      ? [init]
      : [`ivoai server init --root ${r} --public-url URL   (this tree has no settings yet)`]),
    `ivoai server start --root ${r}   (rebuilds the search indexes from the restored stores)`,
    "re-enroll clients and reconnect web assistants: credentials and OAuth grants are never in a backup",
  ];
}
