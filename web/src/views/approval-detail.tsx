// One approval request: who asked for what, everything it changes (as inert text), and the approve/reject form.
// A pending request is re-read every few seconds, so a decision someone else made shows here too.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { errorMessage } from "../api.js";
import { QueryState, useDraft, When } from "../common.js";
import { useApi } from "../context.js";
import type {
  ApprovalDetail as ApprovalDetailBody,
  ApprovalRecord,
  DecisionOutcomeName,
  DecisionResult,
} from "../types.js";
import { ChangesView, deletesPage } from "./approvals-changes.js";

/** While a request is pending, its details are re-read this often (someone else may decide it). */
const PENDING_POLL_MS = 3000;
/** A big body is re-read less often: each poll carries every line of the diff. */
const BIG_BODY_LINES = 2000;
const BIG_BODY_POLL_MS = 15_000;

/** "Bea (cli_123)", or the id alone when the server no longer knows the credential's name. */
export function RequesterName({ name, id }: { name: string | null; id: string }) {
  if (!name) return <span className="mono">{id}</span>;
  return (
    <span>
      {name} <span className="muted mono ap-id">({id})</span>
    </span>
  );
}

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
  const dangerId = useId();
  // Kept here, not in the form: the decided record replaces the cached one and the form goes away.
  const [result, setResult] = useState<DecisionResult | null>(null);
  const detail = useQuery({
    queryKey: ["approval", id],
    queryFn: () => api.get<ApprovalDetailBody>(`/v1/approvals/${encodeURIComponent(id)}`),
    refetchInterval: (query) => {
      const data = query.state.data;
      if (data?.status !== "pending") return false;
      return (data.changes?.body.lines.length ?? 0) > BIG_BODY_LINES ? BIG_BODY_POLL_MS : PENDING_POLL_MS;
    },
  });
  const loaded = detail.data !== undefined;
  // The status when the request was opened: a change from pending that this person did not make is announced.
  const [firstStatus, setFirstStatus] = useState<string | null>(null);
  useEffect(() => {
    if (detail.data && firstStatus === null) setFirstStatus(detail.data.status);
  }, [detail.data, firstStatus]);
  // Opening a request (by Enter, click or link) moves focus into its details.
  useEffect(() => {
    if (loaded) headingRef.current?.focus();
  }, [loaded]);

  return (
    <section aria-label="Approval details" className="panel detail ap-detail">
      <QueryState query={detail} label="the request">
        {() => {
          const record = detail.data as ApprovalDetailBody;
          const decidedElsewhere = !result && firstStatus === "pending" && record.status !== "pending";
          const target = `${record.scope}:${record.path}`;
          return (
            <>
              <h2
                tabIndex={-1}
                ref={headingRef}
                aria-describedby={record.changes && deletesPage(record.changes) ? dangerId : undefined}
              >
                {record.tool} {target}
              </h2>
              {decidedElsewhere && (
                <p role="status" className="ap-notice">
                  <strong>Decided while you were looking:</strong> {record.status}
                  {record.decided_by ? ` by ${record.decided_by}` : ""}
                  {record.decided_at && (
                    <>
                      , <When iso={record.decided_at} />
                    </>
                  )}
                  .
                </p>
              )}
              <dl className="facts">
                <dt>Status</dt>
                <dd>
                  <span className={`ap-status ap-status-${record.status}`}>{record.status}</span>
                </dd>
                <dt>Requester</dt>
                <dd>
                  <RequesterName name={record.requester_name} id={record.requester} />
                </dd>
                <dt>Session</dt>
                <dd className="mono">{record.session_id ?? "none"}</dd>
                <dt>Scope and path</dt>
                <dd className="mono">{target}</dd>
                <dt>Action</dt>
                <dd>{record.action}</dd>
                <dt>Summary</dt>
                <dd className="pre-wrap ap-clip">{record.summary}</dd>
                <dt>Created</dt>
                <dd>
                  <When iso={record.created_at} />
                </dd>
                <dt>Request expires</dt>
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
              <h3>What approving changes</h3>
              {record.changes ? (
                <ChangesView changes={record.changes} target={target} dangerId={dangerId} />
              ) : (
                <p className="muted">The server did not describe this request's changes.</p>
              )}
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
  // Kept across an idle sign-out: the half-typed reason comes back with the request.
  const [reason, setReason, clearReason] = useDraft(`approval-reason:${record.id}`);
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
      // The answer is the bare record: the description of the change stays what it was.
      queryClient.setQueryData<ApprovalDetailBody>(["approval", record.id], (current) =>
        current ? { ...current, ...outcome.approval } : current,
      );
      clearReason();
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
