// Plain words for the system error codes users meet (ECONNREFUSED, ENOTFOUND…), so no raw code reaches a message alone.

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused: nothing is listening there",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved right now",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  EPIPE: "the connection closed",
  UND_ERR_SOCKET: "the connection closed unexpectedly",
};

/** Why a connection failed, in words, for a Node/undici error code; undefined for codes it does not know. */
export function networkReason(code: string | undefined): string | undefined {
  return code === undefined ? undefined : NETWORK_REASONS[code];
}

/** The errno code behind a failed fetch ("fetch failed" keeps it on its cause). */
export function fetchFailureCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown; cause?: { code?: unknown } } } | undefined)?.cause;
  const code = cause?.code ?? cause?.cause?.code;
  return typeof code === "string" ? code : undefined;
}
