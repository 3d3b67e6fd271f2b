// Why a token request failed, and the one wire error each reason becomes: every grant failure answers the same
// generic invalid_grant, so a caller learns nothing about a code's or a token's state (the log keeps the reason).

export type TokenFailure =
  | "bad_content_type"
  | "malformed_body"
  | "unknown_client"
  | "unsupported_grant_type"
  | "unknown_code"
  | "code_of_other_client"
  | "code_replayed"
  | "code_expired"
  | "redirect_uri_mismatch"
  | "pkce_failed"
  | "unknown_refresh_token"
  | "refresh_token_of_other_client"
  | "refresh_token_expired"
  | "refresh_token_revoked"
  | "refresh_token_reused"
  | "grant_expired"
  | "grant_revoked"
  | "resource_mismatch"
  | "scope_widened";

export interface OAuthWireError {
  status: 400 | 401;
  body: { error: string; error_description: string };
}

export const INVALID_GRANT_DESCRIPTION =
  "the authorization grant is invalid, expired, revoked, or was issued to another client";

/** The wire error of a failure reason (RFC 6749 §5.2); exhaustive, so a new reason must pick one. */
export function tokenFailureResponse(reason: TokenFailure): OAuthWireError {
  const wire = (status: 400 | 401, error: string, description: string): OAuthWireError => ({
    status,
    body: { error, error_description: description },
  });
  switch (reason) {
    case "bad_content_type":
      return wire(400, "invalid_request", "send the token request as application/x-www-form-urlencoded");
    case "malformed_body":
      return wire(400, "invalid_request", "the token request body could not be read");
    case "unknown_client":
      return wire(401, "invalid_client", "unknown client");
    case "unsupported_grant_type":
      return wire(400, "unsupported_grant_type", "use authorization_code or refresh_token");
    case "unknown_code":
    case "code_of_other_client":
    case "code_replayed":
    case "code_expired":
    case "redirect_uri_mismatch":
    case "pkce_failed":
    case "unknown_refresh_token":
    case "refresh_token_of_other_client":
    case "refresh_token_expired":
    case "refresh_token_revoked":
    case "refresh_token_reused":
    case "grant_expired":
    case "grant_revoked":
      return wire(400, "invalid_grant", INVALID_GRANT_DESCRIPTION);
    case "resource_mismatch":
      return wire(400, "invalid_target", "resource does not match the authorization");
    case "scope_widened":
      return wire(400, "invalid_scope", "a refresh cannot widen the scopes");
    default: {
      const unreachable: never = reason;
      throw new Error(`unmapped token failure ${String(unreachable)}`);
    }
  }
}
