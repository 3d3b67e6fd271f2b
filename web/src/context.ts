// The API client and the signed-in session, shared with every view through React context.
import { createContext, useContext } from "react";
import type { ConsoleApi } from "./api.js";
import type { ConsoleSession } from "./types.js";

export const ApiContext = createContext<ConsoleApi | null>(null);
export const SessionContext = createContext<ConsoleSession | null>(null);

export function useApi(): ConsoleApi {
  const api = useContext(ApiContext);
  if (!api) throw new Error("useApi outside <ConsoleApp>");
  return api;
}

export function useSession(): ConsoleSession {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in console");
  return session;
}

/** Whether the signed-in role carries a scope (actions it lacks are disabled, not just refused). */
export function useCan(scope: string): boolean {
  return useSession().scopes.some((held) => held === scope);
}
