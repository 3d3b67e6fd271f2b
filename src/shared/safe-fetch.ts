// HTTP for talking to ivoai servers: no cross-origin redirects, a deadline that covers the whole body, a cap
// on the response size, and credentials only ever sent to their own origin.
import { IvoaiError } from "./errors.js";
import { isLoopbackHost } from "./loopback.js";
import { networkReason } from "./system-error-text.js";

export interface SafeFetchOptions {
  /** Whole-exchange deadline, body included. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** Attached only when the request stays on `origin`. */
  bearer?: { origin: string; token: string };
  signal?: AbortSignal;
  maxRedirects?: number;
}

export type SafeFetchErrorKind =
  | "timeout"
  | "too_large"
  | "redirect"
  | "network"
  | "credential_origin"
  | "plain_http";

export class SafeFetchError extends IvoaiError {
  readonly kind: SafeFetchErrorKind;
  constructor(kind: SafeFetchErrorKind, message: string, cause?: unknown) {
    super("NETWORK", message, cause === undefined ? {} : { cause });
    this.kind = kind;
  }
}

/** fetch with the rules above; resolves to a fully buffered Response. */
export async function safeFetch(
  input: string | URL,
  init: RequestInit,
  options: SafeFetchOptions,
): Promise<Response> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let url = new URL(input);
  const origin = url.origin;
  for (let hop = 0; ; hop++) {
    const headers = new Headers(init.headers);
    if (options.bearer) {
      if (url.origin !== options.bearer.origin) {
        throw new SafeFetchError("credential_origin", `refusing to send a credential to ${url.origin}`);
      }
      headers.set("authorization", `Bearer ${options.bearer.token}`);
    }
    let response: Response;
    try {
      response = await fetch(url, { ...init, headers, redirect: "manual", signal });
    } catch (error) {
      throw mapError(error, url, options.timeoutMs);
    }
    if (response.status >= 300 && response.status < 400 && response.headers.has("location")) {
      await response.body?.cancel();
      const next = new URL(response.headers.get("location") as string, url);
      if (next.origin !== origin)
        throw new SafeFetchError("redirect", `refused a redirect from ${origin} to ${next.origin}`);
      if (hop >= (options.maxRedirects ?? 3))
        throw new SafeFetchError("redirect", `too many redirects from ${origin}`);
      url = next;
      continue;
    }
    const body = await readCapped(response, options.maxResponseBytes, url, options.timeoutMs);
    return new Response(
      body.length === 0 && (response.status === 204 || response.status === 304) ? null : body,
      {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      },
    );
  }
}

async function readCapped(response: Response, max: number, url: URL, timeoutMs: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > max) {
    await response.body?.cancel();
    throw new SafeFetchError(
      "too_large",
      `${url.origin} answered ${declared} bytes, over the ${max}-byte limit`,
    );
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of response.body ?? []) {
      total += chunk.length;
      if (total > max) {
        throw new SafeFetchError("too_large", `${url.origin} answered more than the ${max}-byte limit`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof SafeFetchError) throw error;
    throw mapError(error, url, timeoutMs);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

function mapError(error: unknown, url: URL, timeoutMs: number): SafeFetchError {
  const name = (error as { name?: string }).name;
  if (name === "TimeoutError" || name === "AbortError") {
    return new SafeFetchError("timeout", `${url.origin} did not answer within ${timeoutMs} ms`, error);
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? "";
  if (url.protocol === "https:" && PLAIN_HTTP_ANSWER.test(`${code} ${cause?.message ?? ""}`)) {
    return new SafeFetchError("plain_http", plainHttpMessage(url), error);
  }
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code)) {
    return new SafeFetchError("network", `${url.origin}: TLS certificate not valid (${code})`, error);
  }
  const reason = networkReason(code) ?? (code || cause?.message || (error as Error).message);
  return new SafeFetchError(
    "network",
    `could not reach ${url.origin} (${reason}): check the URL and network`,
    error,
  );
}

/** What OpenSSL says when the bytes after its ClientHello are an HTTP answer instead of a TLS record. */
const PLAIN_HTTP_ANSWER =
  /ERR_SSL_WRONG_VERSION_NUMBER|ERR_SSL_PACKET_LENGTH_TOO_LONG|wrong version number|packet length too long/i;

function plainHttpMessage(url: URL): string {
  const plain = `http://${url.host}`;
  const advice = isLoopbackHost(url.hostname)
    ? `use ${plain} (plain http is allowed on loopback only)`
    : `plain http is allowed on loopback only: serve it over TLS (ivoai server init --tls-cert/--tls-key, or a TLS proxy in front)`;
  return `the server at ${url.origin} answered plain HTTP, not TLS: ${advice}`;
}
