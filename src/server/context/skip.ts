// Why a file or folder is left out of an ingest: raised by the connectors' safe tree access, the path filter and
// the document preparation alike, so it lives beside them rather than behind the connectors' door.
import type { SecretKind } from "./secret-scan.js";

export type SkipReason =
  | "symlink"
  | "special file"
  | "unsafe name"
  | "too large"
  | "binary content"
  | "invalid UTF-8"
  | "sensitive file"
  | `sensitive content: ${SecretKind}`
  | "vcs internals"
  | "not found"
  | "unreadable"
  | "too deep"
  | "hard link"
  | "quota: documents"
  | "quota: bytes"
  | "quota: chunks";

export class SkipError extends Error {
  readonly reason: SkipReason;
  constructor(reason: SkipReason, detail?: string) {
    super(detail ? `${reason}: ${detail}` : reason);
    this.reason = reason;
  }
}
