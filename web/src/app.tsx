// The console app: session state (signed out / signed in), the query cache, the router, the idle warning and the
// theme (applied when this module loads, before the first render: the CSP allows no inline script).
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { type RouterHistory, RouterProvider } from "@tanstack/react-router";
import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { ApiError, ConsoleApi, errorMessage } from "./api.js";
import { clearDrafts } from "./common.js";
import { ApiContext, SessionContext } from "./context.js";
import { IdleWarning } from "./idle-warning.js";
import { createConsoleRouter } from "./router.js";
import { codeFromHash, SESSION_ENDED, SignIn, SignOutContext } from "./sign-in.js";
import { applyTheme, storedTheme } from "./theme.js";
import type { ConsoleSession } from "./types.js";

if (typeof document !== "undefined") applyTheme(storedTheme());

type AuthState =
  | { status: "loading" }
  | { status: "signed_out"; notice?: string; error?: string; busy?: boolean }
  | { status: "signed_in"; session: ConsoleSession };

function signedOutAfter(error: unknown): AuthState {
  if (error instanceof ApiError && error.code === "session_expired") {
    return { status: "signed_out", notice: SESSION_ENDED };
  }
  if (error instanceof ApiError && error.status === 401) return { status: "signed_out" };
  return { status: "signed_out", error: errorMessage(error) };
}

/** The code in the address bar's fragment, removed from it (and from history) whatever the exchange answers. */
function takeCodeFromHash(): string | undefined {
  const code = codeFromHash(window.location.hash);
  if (code)
    window.history.replaceState(window.history.state, "", window.location.pathname + window.location.search);
  return code;
}

export function ConsoleApp({ history }: { history?: RouterHistory } = {}) {
  const [auth, setAuth] = useState<AuthState>({ status: "loading" });
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: {
            // A 4xx will not change by asking again; a network hiccup might.
            retry: (failures, error) => !(error instanceof ApiError && error.status > 0) && failures < 2,
            refetchOnWindowFocus: true,
          },
        },
      }),
  );
  const [api] = useState(
    () =>
      new ConsoleApi({
        onUnauthorized: (error) => {
          queryClient.clear();
          // Requests in flight when the session ended come back 401 one after another (the first one cleared the
          // cookie): the first answer says why, and a later plain 401 must not replace it.
          setAuth((current) => (current.status === "signed_out" ? current : signedOutAfter(error)));
        },
      }),
  );
  const [router] = useState(() => createConsoleRouter(history));
  const started = useRef(false);

  const exchange = useCallback(
    (code: string) => {
      setAuth({ status: "signed_out", busy: true });
      api.signIn(code).then(
        (session) => setAuth({ status: "signed_in", session }),
        (error: unknown) =>
          setAuth({
            status: "signed_out",
            error:
              error instanceof ApiError && (error.status === 400 || error.status === 401)
                ? `That sign-in code did not work: ${error.message}`
                : errorMessage(error),
          }),
      );
    },
    [api],
  );

  useEffect(() => {
    // A sign-in link opened in a tab that already shows the console changes only the fragment: no reload.
    const onHashChange = () => {
      const code = takeCodeFromHash();
      if (code) exchange(code);
    };
    window.addEventListener("hashchange", onHashChange);
    return () => window.removeEventListener("hashchange", onHashChange);
  }, [exchange]);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const code = takeCodeFromHash();
    if (code) {
      exchange(code);
      return;
    }
    api.loadSession().then(
      (session) => setAuth(session ? { status: "signed_in", session } : { status: "signed_out" }),
      (error: unknown) => setAuth(signedOutAfter(error)),
    );
  }, [api, exchange]);

  const ended = useCallback(
    (error: unknown) => {
      queryClient.clear();
      setAuth((current) =>
        current.status === "signed_out"
          ? current
          : error === undefined
            ? { status: "signed_out", notice: SESSION_ENDED }
            : signedOutAfter(error),
      );
    },
    [queryClient],
  );

  const signOut = useCallback(() => {
    // A deliberate sign-out forgets drafts (the next person at this tab must not find them); an idle one keeps them.
    clearDrafts();
    api.signOut().then(
      () => {
        queryClient.clear();
        setAuth({ status: "signed_out", notice: "You signed out." });
      },
      (error: unknown) => {
        // The session is forgotten here either way; a failure only means the server may still hold it.
        queryClient.clear();
        setAuth(signedOutAfter(error));
      },
    );
  }, [api, queryClient]);

  let content: ReactNode;
  if (auth.status === "loading") {
    content = (
      <main id="main">
        <p role="status">Loading the console…</p>
      </main>
    );
  } else if (auth.status === "signed_out") {
    content = (
      <SignIn notice={auth.notice} error={auth.error} busy={auth.busy ?? false} onSubmit={exchange} />
    );
  } else {
    content = (
      <SessionContext.Provider value={auth.session}>
        <SignOutContext.Provider value={signOut}>
          <RouterProvider router={router} />
          <IdleWarning api={api} session={auth.session} onEnded={ended} />
        </SignOutContext.Provider>
      </SessionContext.Provider>
    );
  }
  return (
    <ApiContext.Provider value={api}>
      <QueryClientProvider client={queryClient}>{content}</QueryClientProvider>
    </ApiContext.Provider>
  );
}
