// The signed-in frame: skip link, header (who is signed in, theme, sign out), the main nav and the view's <main>.
import { Link, Outlet, useRouterState } from "@tanstack/react-router";
import { useContext, useEffect, useRef } from "react";
import { ThemeSelect } from "./common.js";
import { useSession } from "./context.js";
import { SignOutContext } from "./sign-in.js";

const NAV = [
  { to: "/", label: "Overview" },
  { to: "/approvals", label: "Approvals" },
  { to: "/activity", label: "Activity" },
  { to: "/knowledge", label: "Knowledge" },
  { to: "/clients", label: "Clients" },
  { to: "/audit", label: "Audit" },
  { to: "/sessions", label: "Sessions", adminOnly: true },
] as const;

/** The view a path shows: its first segment ("/approvals/apr_1" is still the approvals view). */
function viewOf(pathname: string): string {
  const inside = pathname.replace(/^\/console/, "");
  return inside.split("/")[1] ?? "";
}

/**
 * Moves focus to the new view's main heading when the view changes (not on first load, and not when only the
 * request or page open inside a view changes), so a screen reader starts reading the new view.
 */
function useFocusOnViewChange(): void {
  const view = useRouterState({
    select: (state) => viewOf((state.resolvedLocation ?? state.location).pathname),
  });
  const previous = useRef(view);
  useEffect(() => {
    if (previous.current === view) return;
    previous.current = view;
    const heading = document.querySelector<HTMLElement>("main h1");
    const target = heading ?? document.querySelector<HTMLElement>("main");
    if (!target) return;
    if (heading && !heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
    target.focus();
  }, [view]);
}

export function Layout() {
  const session = useSession();
  const signOut = useContext(SignOutContext);
  useFocusOnViewChange();
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">ivoai console</span>
        <span className="who">
          Signed in as <strong>{session.name}</strong> <span className="role">({session.role})</span>
        </span>
        <ThemeSelect />
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Main" className="main-nav">
        <ul>
          {NAV.filter((item) => !("adminOnly" in item) || session.role === "admin").map((item) => (
            <li key={item.to}>
              <Link
                to={item.to}
                activeOptions={{ exact: item.to === "/", includeSearch: false }}
                activeProps={{ "aria-current": "page", className: "active" }}
              >
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}

export function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>
        This console page does not exist. <Link to="/">Go to the overview</Link>.
      </p>
    </>
  );
}
