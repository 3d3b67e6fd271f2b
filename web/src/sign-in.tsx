// The sign-in screen: a single-use code typed in, or taken once from the link's #code= fragment.
import { createContext, type FormEvent, useState } from "react";
import { ThemeSelect } from "./common.js";

/** Signs the person out (DELETE /v1/console/session); provided by the app to the layout. */
export const SignOutContext = createContext<() => void>(() => undefined);

/** The notice shown when the server said the session expired. */
export const SESSION_ENDED = "Your session ended. Sign in again to continue.";

/** Reads `code=` from a URL fragment (`#code=ivoai_con_…`), or undefined. */
export function codeFromHash(hash: string): string | undefined {
  const params = new URLSearchParams(hash.startsWith("#") ? hash.slice(1) : hash);
  const code = params.get("code");
  return code && code.length > 0 ? code : undefined;
}

export function SignIn({
  notice,
  error,
  busy,
  onSubmit,
}: {
  notice: string | undefined;
  error: string | undefined;
  busy: boolean;
  onSubmit: (code: string) => void;
}) {
  const [code, setCode] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = code.trim();
    if (trimmed.length > 0) onSubmit(trimmed);
  };
  return (
    <>
      <header className="top">
        <span className="brand">ivoai console</span>
        <ThemeSelect />
      </header>
      <main id="main" className="sign-in">
        <h1>Sign in</h1>
        {notice && (
          <p role="status" className="notice">
            {notice}
          </p>
        )}
        <p>
          Ask an operator for a sign-in code (<code>ivoai server console login</code>) and paste it here, or
          open the link it printed.
        </p>
        <form onSubmit={submit}>
          <label htmlFor="sign-in-code">Sign-in code</label>
          <input
            id="sign-in-code"
            name="code"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={code}
            onChange={(event) => setCode(event.target.value)}
            required
          />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </main>
    </>
  );
}
