// The console's HTTP client: same-origin fetch with the session cookie, the CSRF token held in memory only, and
// one place that turns a 401 into "back to sign-in".
import { CSRF_HEADER, IDLE_HEADER } from "../../src/protocol/console-api.js";
import { terminalText } from "../../src/shared/terminal-text.js";
import type { ConsoleSession, ProblemBody } from "./types.js";

/** When the person last used the page (typed, clicked, scrolled, touched): polling alone keeps no session alive. */
let lastInput = Date.now();
if (typeof window !== "undefined") {
  for (const event of ["pointerdown", "keydown", "wheel", "touchstart"]) {
    window.addEventListener(event, () => (lastInput = Date.now()), { capture: true, passive: true });
  }
}

/**
 * Every string the server sends may be an agent's text: control characters and bidi overrides become visible
 * escapes (`\u202e`) before anything renders them, so a title cannot reorder what an approver reads. Newlines
 * and tabs stay for bodies and diffs. Ids and paths never hold such characters, so they pass unchanged.
 */
function displaySafe(_key: string, value: unknown): unknown {
  return typeof value === "string" ? terminalText(value, { multiline: true }) : value;
}

/** Records input the listeners may not see (a click from a test or assistive tech fires no pointerdown). */
export function noteInput(): void {
  lastInput = Date.now();
}

/** When the person last gave input (ms since the epoch, this browser's clock). */
export function lastInputAt(): number {
  return lastInput;
}

/** Whole seconds since the person's last input. */
export function idleSeconds(now = Date.now()): number {
  return Math.max(0, Math.floor((now - lastInput) / 1000));
}

/** An HTTP answer other than 2xx, with the gateway's {error, message} body when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown = undefined,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export interface ApiOptions {
  /** Called on any 401 (the session is gone): the app clears its cache and shows sign-in. */
  onUnauthorized: (error: ApiError) => void;
}

export interface RequestOptions {
  method?: "GET" | "POST" | "DELETE";
  body?: unknown;
  /** Statuses (besides 2xx) whose JSON body is a result, not an error (409 for approval outcomes). */
  accept?: readonly number[];
}

/** The console's API client. The session (and its CSRF token) lives in this object only. */
export class ConsoleApi {
  #session: ConsoleSession | null = null;
  #clockOffset = 0;
  readonly #options: ApiOptions;

  constructor(options: ApiOptions) {
    this.#options = options;
  }

  /** GET /v1/console/session: the current session, or null when signed out (401). */
  async loadSession(): Promise<ConsoleSession | null> {
    try {
      this.#session = await this.request<ConsoleSession>("/v1/console/session", {}, false);
      return this.#session;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        this.#session = null;
        if (error.code === "session_expired") throw error;
        return null;
      }
      throw error;
    }
  }

  /** POST /v1/console/session {code}: exchanges a single-use sign-in code for a session cookie. */
  async signIn(code: string): Promise<ConsoleSession> {
    this.#session = await this.request<ConsoleSession>(
      "/v1/console/session",
      { method: "POST", body: { code } },
      false,
    );
    return this.#session;
  }

  /** DELETE /v1/console/session: revokes the session on the server, then forgets it here. */
  async signOut(): Promise<void> {
    try {
      await this.request<void>("/v1/console/session", { method: "DELETE" }, false);
    } finally {
      this.#session = null;
    }
  }

  /**
   * The server's clock minus this browser's (from the last answer's Date header, whole seconds), so a time the
   * server sent (the idle end) can be compared with Date.now() on a computer whose clock is off.
   */
  get clockOffset(): number {
    return this.#clockOffset;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>(path);
  }

  post<T>(path: string, body: unknown = {}, accept: readonly number[] = []): Promise<T> {
    return this.request<T>(path, { method: "POST", body, accept });
  }

  async request<T>(path: string, options: RequestOptions = {}, reportUnauthorized = true): Promise<T> {
    const method = options.method ?? "GET";
    const headers: Record<string, string> = {
      accept: "application/json",
      [IDLE_HEADER]: String(idleSeconds()),
    };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (method !== "GET" && this.#session) headers[CSRF_HEADER] = this.#session.csrf_token;
    const init: RequestInit = { method, headers, credentials: "same-origin", cache: "no-store" };
    if (options.body !== undefined) init.body = JSON.stringify(options.body);
    let response: Response;
    try {
      response = await fetch(path, init);
    } catch (cause) {
      throw new ApiError(0, "network", "The server could not be reached.", cause);
    }
    const serverDate = Date.parse(response.headers.get("date") ?? "");
    if (Number.isFinite(serverDate)) this.#clockOffset = serverDate - Date.now();
    const text = await response.text();
    let body: unknown;
    if (text.length > 0) {
      try {
        body = JSON.parse(text, displaySafe);
      } catch {
        body = undefined;
      }
    }
    if (response.ok || options.accept?.includes(response.status)) return body as T;
    const problem = isProblem(body) ? body : undefined;
    const error = new ApiError(
      response.status,
      problem?.error ?? `http_${response.status}`,
      problem?.message ?? `The server answered ${response.status}.`,
      body,
    );
    if (response.status === 401) {
      this.#session = null;
      if (reportUnauthorized) this.#options.onUnauthorized(error);
    }
    throw error;
  }
}

function isProblem(value: unknown): value is ProblemBody {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as ProblemBody).error === "string" &&
    typeof (value as ProblemBody).message === "string"
  );
}

/** A readable line for any error a query or mutation threw. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return "Something went wrong.";
}

/** Builds a query string, leaving out undefined/empty values. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text.length > 0 ? `?${text}` : "";
}

/** The console URL that shows one memory page (the knowledge view and its graph link there). */
export function pageHref(scope: string, path: string): string {
  return `/console/knowledge${query({ scope, path })}`;
}
