// Clients: enrolled credentials and Web MCP (OAuth) clients with their grants; revoke with an in-page confirmation.
// The tables are in clients-tables.tsx; this view owns the queries and the confirmation flow.
import { type UseMutationResult, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type RefObject, useRef, useState } from "react";
import { QueryState, useTitle } from "../common.js";
import { ConfirmRevoke, DoneNotice } from "../confirm.js";
import { useApi, useCan } from "../context.js";
import type { EnrolledClient, WebClient } from "../types.js";
import {
  EnrolledClientsTable,
  type RevokeActions,
  type RevokeTarget,
  WebClientsTable,
} from "./clients-tables.js";
import "./admin.css";

export function ClientsView() {
  useTitle("Clients");
  const api = useApi();
  const canRevoke = useCan("clients:revoke");
  const headingRef = useRef<HTMLHeadingElement>(null);
  const flow = useRevokeFlow(headingRef);
  const enrolled = useQuery({
    queryKey: ["clients"],
    queryFn: () => api.get<{ clients: EnrolledClient[] }>("/v1/admin/clients"),
  });
  const web = useQuery({
    queryKey: ["oauth-clients"],
    queryFn: () => api.get<{ clients: WebClient[] }>("/v1/admin/oauth-clients"),
  });
  const actions: RevokeActions = { canRevoke, ask: flow.ask };
  return (
    <>
      <h1 ref={headingRef} tabIndex={-1}>
        Clients
      </h1>
      {!canRevoke && <p className="muted">Your role can see clients but not revoke them.</p>}
      <RevokeConfirmation flow={flow} canRevoke={canRevoke} />
      <DoneNotice message={flow.done} />
      <QueryState query={enrolled} label="enrolled clients">
        {() => <EnrolledClientsTable clients={enrolled.data?.clients ?? []} actions={actions} />}
      </QueryState>
      <QueryState query={web} label="web clients">
        {() => <WebClientsTable clients={web.data?.clients ?? []} actions={actions} />}
      </QueryState>
    </>
  );
}

/** The revocation in progress: what is being confirmed, what was done, and the request itself. */
interface RevokeFlow {
  pending: RevokeTarget | null;
  done: string | null;
  revoke: UseMutationResult<unknown, Error, RevokeTarget>;
  ask(target: RevokeTarget): void;
  cancel(): void;
}

function useRevokeFlow(headingRef: RefObject<HTMLHeadingElement | null>): RevokeFlow {
  const api = useApi();
  const queryClient = useQueryClient();
  const [pending, setPending] = useState<RevokeTarget | null>(null);
  const [done, setDone] = useState<string | null>(null);
  /** The Revoke button that opened the confirmation: Cancel returns focus to it. */
  const openerRef = useRef<HTMLElement | null>(null);
  const revoke = useMutation({
    mutationFn: (target: RevokeTarget) => api.post<unknown>(target.path),
    onSuccess: (_result, target) => {
      setPending(null);
      setDone(`Revoked ${target.what}. Its next request will be refused.`);
      void queryClient.invalidateQueries({ queryKey: ["clients"] });
      void queryClient.invalidateQueries({ queryKey: ["oauth-clients"] });
      void queryClient.invalidateQueries({ queryKey: ["overview"] });
      // The confirmation and the row's button are gone: focus goes to the list's heading, not to <body>.
      headingRef.current?.focus();
    },
  });
  return {
    pending,
    done,
    revoke,
    ask(target) {
      openerRef.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      revoke.reset();
      setDone(null);
      setPending(target);
    },
    cancel() {
      setPending(null);
      const opener = openerRef.current;
      (opener?.isConnected ? opener : headingRef.current)?.focus();
    },
  };
}

function RevokeConfirmation(props: { flow: RevokeFlow; canRevoke: boolean }) {
  const { flow, canRevoke } = props;
  const { pending, revoke } = flow;
  if (!pending) return null;
  return (
    <ConfirmRevoke
      key={pending.path}
      disabled={revoke.isPending || !canRevoke}
      error={revoke.error}
      onConfirm={() => revoke.mutate(pending)}
      onCancel={flow.cancel}
    >
      Revoke {pending.what}? It loses access at once and its next request is refused. This cannot be undone.
    </ConfirmRevoke>
  );
}
