// Bulk decisions: the bar over checked requests, the confirmation that says how many and what they do, and
// each request's outcome. One POST per batch of ≤ MAX_BULK_DECISION ids, never sent twice for one confirmation.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { MAX_BULK_DECISION } from "../../../src/protocol/approvals.js";
import { errorMessage } from "../api.js";
import { useDraft } from "../common.js";
import { useApi } from "../context.js";
import type { ApprovalAction, ApprovalSummary, BulkDecisionResponse, BulkDecisionResult } from "../types.js";

const ACTION_WORDS: Record<ApprovalAction, { one: string; many: string }> = {
  delete_page: { one: "deletes a page", many: "delete pages" },
  write_page: { one: "writes a page", many: "write pages" },
  feedback: { one: "records feedback", many: "record feedback" },
};
const ACTION_ORDER: ApprovalAction[] = ["delete_page", "write_page", "feedback"];

export const BULK_OUTCOME_TEXT: Record<BulkDecisionResult["outcome"], string> = {
  applied: "applied",
  rejected: "rejected",
  conflict: "not applied: the page changed since the request",
  expired: "expired before the decision",
  already_decided: "already decided by someone else",
  not_found: "no such request",
  forbidden: "not allowed: nobody approves a request made with their own credential",
  error: "not decided: it failed (see its message)",
};

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** "Approve 3 requests: 1 deletes a page, 2 write pages" — how many and what they do, deletions first. */
export function bulkSentence(approve: boolean, rows: ApprovalSummary[]): string {
  const counts = new Map<ApprovalAction, number>();
  for (const row of rows) counts.set(row.action, (counts.get(row.action) ?? 0) + 1);
  const parts = ACTION_ORDER.filter((action) => counts.has(action)).map((action) => {
    const count = counts.get(action) as number;
    const words = ACTION_WORDS[action];
    return `${count} ${count === 1 ? words.one : words.many}`;
  });
  return `${approve ? "Approve" : "Reject"} ${plural(rows.length, "request")}: ${parts.join(", ")}`;
}

export function BulkBar({
  selected,
  onClear,
  onDone,
}: {
  selected: ApprovalSummary[];
  onClear: () => void;
  onDone: (results: BulkOutcome) => void;
}) {
  const [verb, setVerb] = useState<"approve" | "reject" | null>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  const count = selected.length;
  const open = (next: "approve" | "reject", button: HTMLButtonElement) => {
    opener.current = button;
    setVerb(next);
  };
  return (
    <fieldset className="ap-bulk">
      <legend className="ap-sr-only">Bulk decision</legend>
      <span>{plural(count, "request")} checked</span>
      <button type="button" className="approve" onClick={(event) => open("approve", event.currentTarget)}>
        Approve {count}
      </button>
      <button type="button" className="reject" onClick={(event) => open("reject", event.currentTarget)}>
        Reject {count}
      </button>
      <button type="button" onClick={onClear}>
        Clear
      </button>
      {verb && (
        <BulkDialog
          approve={verb === "approve"}
          rows={selected}
          onCancel={() => {
            setVerb(null);
            opener.current?.focus();
          }}
          onDone={(outcome) => {
            setVerb(null);
            onDone(outcome);
          }}
        />
      )}
    </fieldset>
  );
}

export interface BulkOutcome {
  approve: boolean;
  results: BulkDecisionResult[];
  /** The rows as they were when confirmed, by id, to name each result. */
  rows: Map<string, ApprovalSummary>;
}

function BulkDialog({
  approve,
  rows,
  onCancel,
  onDone,
}: {
  approve: boolean;
  rows: ApprovalSummary[];
  onCancel: () => void;
  onDone: (outcome: BulkOutcome) => void;
}) {
  const api = useApi();
  const queryClient = useQueryClient();
  const id = useId();
  const dialogRef = useRef<HTMLDivElement>(null);
  const firstRef = useRef<HTMLTextAreaElement & HTMLButtonElement>(null);
  const sent = useRef(false);
  // Kept across an idle sign-out, like a single request's reason.
  const [reason, setReason, clearReason] = useDraft(`bulk-reason:${approve ? "approve" : "reject"}`);
  const [invalid, setInvalid] = useState<string | null>(null);
  // Frozen at opening: a refresh of the list does not change what this confirmation is about.
  const [batch] = useState(() => [...new Map(rows.map((row) => [row.id, row])).values()]);
  const sentence = bulkSentence(approve, batch);

  const decide = useMutation({
    mutationFn: async () => {
      const trimmed = reason.trim();
      const ids = batch.map((row) => row.id);
      const results: BulkDecisionResult[] = [];
      for (let start = 0; start < ids.length; start += MAX_BULK_DECISION) {
        const answer = await api.post<BulkDecisionResponse>("/v1/approvals/decide", {
          ids: ids.slice(start, start + MAX_BULK_DECISION),
          approve,
          ...(trimmed ? { reason: trimmed } : {}),
        });
        results.push(...answer.results);
      }
      return results;
    },
    onSuccess: (results) => {
      clearReason();
      void queryClient.invalidateQueries({ queryKey: ["approvals"] });
      void queryClient.invalidateQueries({ queryKey: ["approval-counts"] });
      void queryClient.invalidateQueries({ queryKey: ["approval"] });
      onDone({ approve, results, rows: new Map(batch.map((row) => [row.id, row])) });
    },
    onError: () => {
      // Nothing came back: the person may try again (the server applies each request at most once anyway).
      sent.current = false;
    },
  });

  useEffect(() => {
    firstRef.current?.focus();
  }, []);

  const confirm = () => {
    if (sent.current) return;
    if (!approve && reason.trim().length === 0) {
      setInvalid("A reason is required to reject requests.");
      return;
    }
    sent.current = true;
    decide.mutate();
  };
  // Focus stays inside the dialog: Tab from the last control goes to the first, and back.
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape" && !decide.isPending) {
      event.preventDefault();
      onCancel();
      return;
    }
    if (event.key !== "Tab") return;
    const focusable = dialogRef.current?.querySelectorAll<HTMLElement>("textarea, button:not([disabled])");
    if (!focusable || focusable.length === 0) return;
    const first = focusable[0] as HTMLElement;
    const last = focusable[focusable.length - 1] as HTMLElement;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  };

  return (
    <div className="ap-backdrop">
      <div
        ref={dialogRef}
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-text`}
        className="ap-dialog panel"
        onKeyDown={onKeyDown}
      >
        <h2 id={`${id}-title`}>{approve ? "Approve" : "Reject"} checked requests?</h2>
        <p id={`${id}-text`}>
          <strong>{sentence}.</strong>{" "}
          {approve
            ? "Each change is written to shared memory once; agents see it at once."
            : "None of these changes is made; each agent sees the rejection and your reason."}
        </p>
        <label htmlFor={`${id}-reason`}>Reason{approve ? " (optional)" : ""}</label>
        <textarea
          id={`${id}-reason`}
          ref={approve ? undefined : firstRef}
          rows={3}
          value={reason}
          aria-invalid={invalid ? true : undefined}
          aria-describedby={invalid ? `${id}-error` : undefined}
          onChange={(event) => {
            setReason(event.target.value);
            if (invalid) setInvalid(null);
          }}
        />
        {invalid && (
          <p id={`${id}-error`} role="alert" className="error">
            {invalid}
          </p>
        )}
        {decide.isError && (
          <p role="alert" className="error">
            Nothing was decided: {errorMessage(decide.error)}
          </p>
        )}
        <div className="buttons">
          <button
            type="button"
            className={approve ? "approve" : "reject"}
            disabled={decide.isPending}
            onClick={confirm}
          >
            {approve ? "Approve" : "Reject"} {batch.length}
          </button>
          <button
            type="button"
            ref={approve ? firstRef : undefined}
            disabled={decide.isPending}
            onClick={onCancel}
          >
            Cancel
          </button>
        </div>
      </div>
    </div>
  );
}

/** Each request's outcome after a bulk decision; takes focus so the person hears how it went. */
export function BulkResults({ outcome, onDismiss }: { outcome: BulkOutcome; onDismiss: () => void }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const tally = new Map<string, number>();
  for (const result of outcome.results) tally.set(result.outcome, (tally.get(result.outcome) ?? 0) + 1);
  const summary = [...tally].map(([name, count]) => `${count} ${name.replace("_", " ")}`).join(", ");
  return (
    <section className="panel ap-results" aria-labelledby="ap-results-title">
      <h2 id="ap-results-title" tabIndex={-1} ref={ref}>
        {outcome.approve ? "Bulk approval" : "Bulk rejection"}: {summary}
      </h2>
      <ul>
        {outcome.results.map((result) => {
          const row = outcome.rows.get(result.id);
          return (
            <li key={result.id} className={`ap-result ap-result-${result.outcome}`}>
              <span className="mono">{row ? `${row.scope}:${row.path}` : result.id}</span> —{" "}
              {BULK_OUTCOME_TEXT[result.outcome] ?? result.outcome}
              {result.message ? ` (${result.message})` : ""}
            </li>
          );
        })}
      </ul>
      <button type="button" onClick={onDismiss}>
        Dismiss
      </button>
    </section>
  );
}
