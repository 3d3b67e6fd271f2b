// The warning a minute before the server signs an idle session out: "Stay signed in" counts as input and asks
// the server again, which moves the idle end. Drafts (useDraft) are kept in sessionStorage either way.
import { useCallback, useEffect, useId, useRef, useState } from "react";
import { type ConsoleApi, lastInputAt, noteInput } from "./api.js";
import type { ConsoleSession } from "./types.js";

/** How long before the idle end the warning shows. */
export const IDLE_WARNING_MS = 60_000;
/** Input after the last check is reported to the server at most this often while the end is near. */
const RECHECK_MS = 5_000;

interface IdleWarningProps {
  api: ConsoleApi;
  session: ConsoleSession;
  /** The session ended (or the server answered with an error): the app shows sign-in. */
  onEnded: (error: unknown) => void;
}

/** The idle end on this browser's clock. */
function idleEndOf(session: ConsoleSession, api: ConsoleApi): number {
  return Date.parse(session.idle_expires_at) - api.clockOffset;
}

export function IdleWarning({ api, session, onEnded }: IdleWarningProps) {
  const [idleEnd, setIdleEnd] = useState(() => idleEndOf(session, api));
  const [now, setNow] = useState(() => Date.now());
  // The idle end the server confirmed is near: the warning shows only then, never on a guess.
  const [confirmedEnd, setConfirmedEnd] = useState<number | null>(null);
  const lastCheck = useRef(0);
  const checking = useRef(false);
  const stayButton = useRef<HTMLButtonElement>(null);
  const returnFocus = useRef<Element | null>(null);
  const titleId = useId();
  const textId = useId();

  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);

  /** GET /v1/console/session: it carries the idle header, so recent input moves the server's idle end. */
  const check = useCallback(() => {
    if (checking.current) return;
    checking.current = true;
    lastCheck.current = Date.now();
    api.loadSession().then(
      (fresh) => {
        checking.current = false;
        if (!fresh) {
          onEnded(undefined);
          return;
        }
        const end = idleEndOf(fresh, api);
        setIdleEnd(end);
        setConfirmedEnd(end);
        setNow(Date.now());
      },
      (error: unknown) => {
        checking.current = false;
        onEnded(error);
      },
    );
  }, [api, onEnded]);

  const remaining = idleEnd - now;
  const near = remaining <= IDLE_WARNING_MS;
  useEffect(() => {
    if (!near) return;
    const unconfirmed = confirmedEnd !== idleEnd;
    const inputSinceCheck = lastInputAt() > lastCheck.current && now - lastCheck.current >= RECHECK_MS;
    if (unconfirmed || inputSinceCheck || remaining <= 0) {
      if (remaining <= 0 && now - lastCheck.current < 1000) return;
      check();
    }
  }, [near, confirmedEnd, idleEnd, now, remaining, check]);

  const showing = near && confirmedEnd === idleEnd && remaining > 0;
  useEffect(() => {
    if (!showing) return;
    // Focus goes to the one action; it comes back where the person was once the warning closes.
    returnFocus.current = document.activeElement;
    stayButton.current?.focus();
    return () => {
      const back = returnFocus.current;
      if (back instanceof HTMLElement && back.isConnected) back.focus();
    };
  }, [showing]);

  if (!showing) return null;
  const seconds = Math.max(0, Math.ceil(remaining / 1000));
  return (
    <div
      className="idle-warning"
      role="alertdialog"
      aria-modal="false"
      aria-labelledby={titleId}
      aria-describedby={textId}
    >
      <h2 id={titleId}>Still there?</h2>
      <p id={textId}>
        You will be signed out for inactivity in <span className="num">{seconds} s</span>. What you typed is
        kept and comes back after you sign in again.
      </p>
      <button
        type="button"
        ref={stayButton}
        onClick={() => {
          noteInput();
          check();
        }}
      >
        Stay signed in
      </button>
    </div>
  );
}
