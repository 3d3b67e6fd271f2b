// One approval request: who asked for what, the diff as inert text, and the approve/reject form.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { errorMessage } from "../api.js";
import { QueryState, When } from "../common.js";
import { useApi } from "../context.js";
import type { ApprovalRecord, DecisionOutcomeName, DecisionResult } from "../types.js";
import { DiffView } from "./diff.js";

/** What each decision outcome means, in plain words. */
export const OUTCOME_TEXT: Record<DecisionOutcomeName, { title: string; text: string }> = {
  applied: {
    title: "Applied",
    text: "The change was written to shared memory. Agents see it now.",
  },
  rejected: {
    title: "Rejected",
    text: "The change was not made. The agent that asked sees the rejection and your reason.",
  },
  expired: {
    title: "Expired",
    text: "Nobody decided within the request's time limit, so it lapsed and nothing was written.",
  },
  conflict: {
    title: "Conflict",
    text: "The page changed since the agent made this request, so it was not applied. The agent must propose the change again against the current page.",
  },
  already_decided: {
    title: "Already decided",
    text: "Someone else decided this request first; nothing more was changed.",
  },
};

export function ApprovalDetail({ id, canDecide }: { id: string; canDecide: boolean }) {
  const api = useApi();
  const headingRef = useRef<HTMLHeadingElement>(null);
  // Kept here, not in the form: the decided record replaces the cached one and the form goes away.
  const [result, setResult] = useState<DecisionResult | null>(null);
  const detail = useQuery({
    queryKey: ["approval", id],
    queryFn: () => api.get<ApprovalRecord>(`/v1/approvals/${encodeURIComponent(id)}`),
  });
  const loaded = detail.data !== undefined;
  // Opening a request (by Enter or click) moves focus into its details.
  useEffect(() => {
    if (loaded) headingRef.current?.focus();
  }, [loaded]);

  return (
    <section aria-label="Approval details" className="panel detail">
      <QueryState query={detail} label="the request">
        {() => {
          const record = detail.data as ApprovalRecord;
          return (
            <>
              <h2 tabIndex={-1} ref={headingRef}>
                {record.tool} {record.scope}:{record.path}
              </h2>
              <dl className="facts">
                <dt>Status</dt>
                <dd>{record.status}</dd>
                <dt>Requester</dt>
                <dd>{record.requester}</dd>
                <dt>Session</dt>
                <dd>{record.session_id ?? "none"}</dd>
                <dt>Tool</dt>
                <dd>{record.tool}</dd>
                <dt>Scope and path</dt>
                <dd>
                  {record.scope}:{record.path}
                </dd>
                <dt>Action</dt>
                <dd>{record.action}</dd>
                <dt>Summary</dt>
                <dd className="pre-wrap">{record.summary}</dd>
                <dt>Created</dt>
                <dd>
                  <When iso={record.created_at} />
                </dd>
                <dt>Expires</dt>
                <dd>
                  <When iso={record.expires_at} />
                </dd>
                {record.decided_by && (
                  <>
                    <dt>Decided by</dt>
                    <dd>
                      {record.decided_by}, <When iso={record.decided_at} />
                    </dd>
                  </>
                )}
                {record.reason && (
                  <>
                    <dt>Reason</dt>
                    <dd className="pre-wrap">{record.reason}</dd>
                  </>
                )}
              </dl>
              <h3>Change</h3>
              <DiffView diff={record.diff} label={`Diff of ${record.scope}:${record.path}`} />
              {result && <OutcomeNotice result={result} />}
              {!result && record.status === "pending" && canDecide && (
                <DecisionForm record={record} onDecided={setResult} />
              )}
              {record.status === "pending" && !canDecide && (
                <p className="muted">Your role cannot approve or reject requests.</p>
              )}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

function DecisionForm({
  record,
  onDecided,
}: {
  record: ApprovalRecord;
  onDecided: (result: DecisionResult) => void;
}) {
  const api = useApi();
  const queryClient = useQueryClient();
  const reasonId = useId();
  const [reason, setReason] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const decide = useMutation({
    mutationFn: (verb: "approve" | "reject") => {
      const trimmed = reason.trim();
      return api.post<DecisionResult>(
        `/v1/approvals/${encodeURIComponent(record.id)}/${verb}`,
        trimmed.length > 0 ? { reason: trimmed } : {},
        [409],
      );
    },
    onSuccess: (outcome) => {
      queryClient.setQueryData(["approval", record.id], outcome.approval);
      onDecided(outcome);
      void queryClient.invalidateQueries({ queryKey: ["approvals"] });
      void queryClient.invalidateQueries({ queryKey: ["approval-counts"] });
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
  };
  const reject = () => {
    if (reason.trim().length === 0) {
      setInvalid("A reason is required to reject a request.");
      return;
    }
    setInvalid(null);
    decide.mutate("reject");
  };
  return (
    <form className="decision" onSubmit={submit}>
      <label htmlFor={reasonId}>Reason</label>
      <textarea
        id={reasonId}
        value={reason}
        rows={3}
        aria-invalid={invalid ? true : undefined}
        aria-describedby={invalid ? `${reasonId}-error` : undefined}
        onChange={(event) => {
          setReason(event.target.value);
          if (invalid) setInvalid(null);
        }}
      />
      {invalid && (
        <p id={`${reasonId}-error`} role="alert" className="error">
          {invalid}
        </p>
      )}
      <div className="buttons">
        <button
          type="button"
          className="approve"
          disabled={decide.isPending}
          onClick={() => decide.mutate("approve")}
        >
          Approve
        </button>
        <button type="button" className="reject" disabled={decide.isPending} onClick={reject}>
          Reject
        </button>
      </div>
      {decide.isError && (
        <p role="alert" className="error">
          The decision was not recorded: {errorMessage(decide.error)}
        </p>
      )}
    </form>
  );
}

function OutcomeNotice({ result }: { result: DecisionResult }) {
  const text = OUTCOME_TEXT[result.outcome] ?? { title: result.outcome, text: "" };
  const ref = useRef<HTMLDivElement>(null);
  // The buttons that had focus are gone: focus goes to the outcome, one Shift+Tab from the list.
  useEffect(() => ref.current?.focus(), []);
  return (
    <div ref={ref} tabIndex={-1} role="status" className={`outcome outcome-${result.outcome}`}>
      <p>
        <strong>{text.title}.</strong> {text.text}
      </p>
      {result.message && <p className="muted">Server: {result.message}</p>}
    </div>
  );
}
