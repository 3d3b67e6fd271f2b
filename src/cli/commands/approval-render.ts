// `ivoai server approvals show` as text: the request, then what approving does — the server's own description,
// every item of it, the loudest first — then the body diff with line numbers and context.
import type { ApprovalDetail } from "../../protocol/approvals.js";
import type { ChangeSeverity, DiffLine } from "../../protocol/changes.js";
import { oneLine } from "../../shared/terminal-text.js";

/** Unchanged lines shown around each change; longer unchanged runs collapse to one line saying how many. */
const CONTEXT_LINES = 3;

const MARK: Record<ChangeSeverity, string> = { danger: "!!", warning: " !", change: " •", info: "  " };

/**
 * Every agent-written line is fenced: a single field cannot span lines, and each diff line is prefixed, so no
 * text an agent wrote can pass for a line of ivoai's own (a forged "decided:" line, say).
 */
export function renderApproval(approval: ApprovalDetail): string {
  const { changes } = approval;
  const requester = approval.requester_name
    ? `${oneLine(approval.requester_name)} (${oneLine(approval.requester)})`
    : oneLine(approval.requester);
  return [
    `approval ${approval.id}: ${approval.status}`,
    `  tool:      ${oneLine(approval.tool)} (${oneLine(approval.action)})`,
    `  target:    ${oneLine(`${approval.scope}:${approval.path}`)} (against version ${approval.base_version})`,
    `  requester: ${requester}${approval.session_id ? ` in session ${oneLine(approval.session_id)}` : ""}`,
    `  created:   ${approval.created_at}; the request lapses ${approval.expires_at}`,
    ...(approval.decided_at
      ? [
          `  decided:   ${approval.decided_at} by ${oneLine(approval.decided_by ?? "")}${approval.reason ? `: ${oneLine(approval.reason)}` : ""}`,
        ]
      : []),
    `  summary:   ${oneLine(approval.summary)}`,
    "",
    `  approving: ${oneLine(changes.headline)}`,
    ...changes.items.map((item) => `  ${MARK[item.severity]} ${oneLine(item.text)}`),
    ...(changes.body.lines.length
      ? [
          "",
          `  body: +${changes.body.added} −${changes.body.removed} lines${changes.body.coarse ? " (too far apart to align line by line)" : ""}`,
          ...diffText(changes.body.lines),
        ]
      : []),
  ].join("\n");
}

/** Changed lines with CONTEXT_LINES around them, numbered on both sides, inside the fence. */
function diffText(lines: readonly DiffLine[]): string[] {
  const near = new Uint8Array(lines.length);
  lines.forEach((line, index) => {
    if (line.op === "=") return;
    for (
      let k = Math.max(0, index - CONTEXT_LINES);
      k <= Math.min(lines.length - 1, index + CONTEXT_LINES);
      k++
    )
      near[k] = 1;
  });
  const width = String(lines.length).length;
  const number = (value: number | null) => (value === null ? "" : String(value)).padStart(width);
  const out: string[] = [];
  let skipped = 0;
  lines.forEach((line, index) => {
    if (!near[index]) {
      skipped++;
      return;
    }
    if (skipped) out.push(`  │ ${"".padStart(width * 2 + 1)}   … ${skipped} unchanged lines`);
    skipped = 0;
    const op = line.op === "=" ? " " : line.op;
    out.push(`  │ ${number(line.old)} ${number(line.new)} ${op} ${oneLine(line.text)}`);
  });
  if (skipped) out.push(`  │ ${"".padStart(width * 2 + 1)}   … ${skipped} unchanged lines`);
  return out;
}
