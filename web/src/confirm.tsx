// The in-page revoke confirmation the Sessions and Clients views share: a non-modal alertdialog that takes focus
// when it opens, its error line, and the notice left once the revoke is done.
import { type ReactNode, useEffect, useId, useRef } from "react";
import { errorMessage } from "./api.js";

export interface ConfirmRevokeProps {
  /** The question, which also names the dialog. */
  children: ReactNode;
  /** Confirm is disabled (the revoke is in flight, or the role cannot revoke). */
  disabled: boolean;
  /** The failed revoke's error, shown under the buttons; null when none. */
  error: unknown;
  onConfirm: () => void;
  /** Closes the confirmation; the view sends focus where it belongs. */
  onCancel: () => void;
}

/**
 * Asks before revoking. Mount it only while a revoke is pending, keyed by its target: each opening focuses
 * Confirm, so a keyboard or screen reader user lands on the question.
 */
export function ConfirmRevoke({ children, disabled, error, onConfirm, onCancel }: ConfirmRevokeProps) {
  const textId = useId();
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    confirmRef.current?.focus();
  }, []);
  return (
    <div className="confirm panel" role="alertdialog" aria-labelledby={textId} aria-modal="false">
      <p id={textId}>{children}</p>
      <div className="buttons">
        <button ref={confirmRef} type="button" className="danger" disabled={disabled} onClick={onConfirm}>
          Confirm revoke
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {error != null && (
        <p role="alert" className="error">
          Not revoked: {errorMessage(error)}
        </p>
      )}
    </div>
  );
}

/** What the last revoke did, announced politely; nothing when there is no such message. */
export function DoneNotice({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p role="status" className="notice">
      {message}
    </p>
  );
}
