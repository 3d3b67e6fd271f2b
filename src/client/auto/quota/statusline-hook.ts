// `ivoai hook statusline`: Claude Code runs it as the statusLine command of interactive ivoai sessions; it
// records the payload's quota windows for AUTO and answers with the one short line Claude shows.
import type { QuotaSnapshot } from "../contracts.js";
import { parseStatuslinePayload, statusLineText } from "./claude-statusline.js";
import { openQuotaStore } from "./store.js";

/** Never throws: whatever the payload or the store did, Claude gets a status line. */
export async function recordStatusline(
  payloadText: string,
  stateDir: string,
  now = new Date(),
): Promise<string> {
  let snapshots: QuotaSnapshot[] = [];
  try {
    snapshots = parseStatuslinePayload(JSON.parse(payloadText), now);
  } catch {
    return statusLineText([]);
  }
  if (snapshots.length === 0) return statusLineText([]);
  try {
    await openQuotaStore({ stateDir }).observe(snapshots);
  } catch {
    // The line still shows what Claude said; the next call records again.
  }
  return statusLineText(snapshots);
}
