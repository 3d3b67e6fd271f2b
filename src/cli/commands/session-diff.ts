// `ivoai session diff ID [--stat] [--json]`: what an AUTO session changed in its repository, for review.
import { type ChangedFile, type SessionDiff, sessionDiff } from "../../client/auto/session-diff.js";
import { openRegistry } from "../../client/connections/registry.js";
import { openSessionStore } from "../../client/session/store.js";
import { defineCommand } from "../command.js";

const MARK: Record<ChangedFile["status"], string> = {
  added: "A",
  modified: "M",
  deleted: "D",
  "type-changed": "T",
};

/** One line per file (status, path, +added -deleted or "binary") and a total. */
export function renderStat(diff: SessionDiff): string {
  if (diff.files.length === 0) return `session ${diff.session_id} changed nothing`;
  const width = Math.max(...diff.files.map((file) => file.path.length));
  const lines = diff.files.map((file) => {
    const counts = file.additions === null ? "binary" : `+${file.additions} -${file.deletions ?? 0}`;
    return `${MARK[file.status]} ${file.path.padEnd(width)}  ${counts}`;
  });
  const sum = (key: "additions" | "deletions") =>
    diff.files.reduce((total, file) => total + (file[key] ?? 0), 0);
  const plural = diff.files.length === 1 ? "file" : "files";
  lines.push(`${diff.files.length} ${plural} changed, +${sum("additions")} -${sum("deletions")}`);
  return lines.join("\n");
}

export const sessionDiffCommand = defineCommand({
  name: "diff",
  summary: "Show what an AUTO session changed in its repository (its worktree, or your checkout)",
  description:
    "Compares the working tree recorded when the session started (untracked files included, ignored ones not)\n" +
    "with the session's folder now: its worktree for 'ivoai auto --worktree' (its branch once the worktree is\n" +
    "removed), otherwise the checkout it ran in, so later edits of yours show too. Prints git's unified diff;\n" +
    "--stat one line per file; --json {session_id, base_commit, base_tree, worktree, files}.",
  positionals: [{ name: "ID", description: "session id", required: true }],
  json: true,
  options: { stat: { type: "boolean", description: "one line per changed file with its line counts" } },
  async run(ctx) {
    const session = await openSessionStore(openRegistry(ctx.env).paths.stateDir).get(
      ctx.positionals[0] ?? "",
    );
    const { diff, patch } = await sessionDiff(session, ctx.env);
    if (ctx.json || ctx.options.stat) {
      ctx.out.data(diff, renderStat);
      return 0;
    }
    const text = await patch();
    if (text === "") ctx.out.note(`ivoai: session ${diff.session_id} changed nothing`);
    else ctx.out.line(text.replace(/\n$/, ""));
    return 0;
  },
});
