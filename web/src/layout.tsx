// The signed-in frame: skip link, header (who is signed in, sign out), the main nav and the view's <main>.
import { Link, Outlet } from "@tanstack/react-router";
import { useContext } from "react";
import { useSession } from "./context.js";
import { SignOutContext } from "./sign-in.js";

const NAV = [
  { to: "/", label: "Overview" },
  { to: "/approvals", label: "Approvals" },
  { to: "/activity", label: "Activity" },
  { to: "/knowledge", label: "Knowledge" },
  { to: "/clients", label: "Clients" },
] as const;

export function Layout() {
  const session = useSession();
  const signOut = useContext(SignOutContext);
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
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Main" className="main-nav">
        <ul>
          {NAV.map((item) => (
            <li key={item.to}>
              <Link
                to={item.to}
                activeOptions={{ exact: true, includeSearch: false }}
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
