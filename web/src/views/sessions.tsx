// Console sessions (admin only): every sign-in with its role, activity and state, and revoking one behind an
// in-page confirmation; the revoked browser is signed out at its next request.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import type { ConsoleSessionView } from "../../../src/protocol/console-api.js";
import { DataTable, QueryState, useTitle, When } from "../common.js";
import { ConfirmRevoke, DoneNotice } from "../confirm.js";
import { useApi, useSession } from "../context.js";
import "./admin.css";

export function SessionsView() {
  useTitle("Sessions");
  const session = useSession();
  if (session.role !== "admin") {
    return (
      <>
        <h1>Sessions</h1>
        <p className="muted">Only a console admin can see and revoke console sessions.</p>
      </>
    );
  }
  return <SessionList />;
}

function SessionList() {
  const api = useApi();
  const queryClient = useQueryClient();
  const [pending, setPending] = useState<ConsoleSessionView | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const sessions = useQuery({
    queryKey: ["console-sessions"],
    queryFn: () => api.get<{ sessions: ConsoleSessionView[] }>("/v1/console/sessions"),
    refetchInterval: 30_000,
  });
  const revoke = useMutation({
    mutationFn: (target: ConsoleSessionView) =>
      api.post<ConsoleSessionView>(`/v1/console/sessions/${encodeURIComponent(target.id)}/revoke`),
    onSuccess: (_result, target) => {
      setPending(null);
      setDone(`Revoked ${target.name}'s session. That browser is signed out at its next request.`);
      void queryClient.invalidateQueries({ queryKey: ["console-sessions"] });
      // The confirmation and its button are gone: focus goes back to the list, not to the page's body.
      headingRef.current?.focus();
    },
  });

  return (
    <>
      <h1 ref={headingRef} tabIndex={-1}>
        Sessions
      </h1>
      <p className="muted">Everyone signed in to this console. Revoking a session signs that browser out.</p>
      {pending && (
        <ConfirmRevoke
          key={pending.id}
          disabled={revoke.isPending}
          error={revoke.error}
          onConfirm={() => revoke.mutate(pending)}
          onCancel={() => {
            setPending(null);
            headingRef.current?.focus();
          }}
        >
          Revoke {pending.name}'s {pending.role} session
          {pending.current ? " (this session: you will be signed out)" : ""}? Its next request is refused.
        </ConfirmRevoke>
      )}
      <DoneNotice message={done} />
      <QueryState query={sessions} label="console sessions">
        {() => (
          <DataTable
            caption="Console sessions, newest first"
            columns={[
              "Name",
              "Role",
              "State",
              "Signed in",
              "Last seen",
              "Idle end",
              "Absolute end",
              "Action",
            ]}
            empty="No console sessions."
            rows={(sessions.data?.sessions ?? []).map((row) => (
              <tr key={row.id}>
                <th scope="row" className="wrap-anywhere">
                  {row.name}
                  {row.current && <span className="this-session"> (this session)</span>}
                </th>
                <td>{row.role}</td>
                <td>
                  <span className={`session-state ${row.state}`}>{row.state}</span>
                </td>
                <td>
                  <When iso={row.created_at} />
                </td>
                <td>
                  <When iso={row.last_seen_at} />
                </td>
                <td>
                  <When iso={row.idle_expires_at} />
                </td>
                <td>
                  <When iso={row.expires_at} />
                </td>
                <td>
                  {row.state === "revoked" ? (
                    <span className="muted">
                      revoked <When iso={row.revoked_at} />
                    </span>
                  ) : row.state === "active" ? (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => {
                        revoke.reset();
                        setDone(null);
                        setPending(row);
                      }}
                    >
                      Revoke {row.name}
                      {row.current ? " (this session)" : ""}
                    </button>
                  ) : (
                    <span className="muted">ended</span>
                  )}
                </td>
              </tr>
            ))}
          />
        )}
      </QueryState>
    </>
  );
}
