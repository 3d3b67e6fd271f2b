// The scopes a client credential can carry; enrollment never grants an administrative mutation.
import { z } from "zod";

export const SCOPES = [
  "context:read",
  "memory:read",
  "memory:write",
  "memory:delete",
  "status:read",
  "doctor:read",
  "connector:read",
  // Deciding approvals is a person's job: never in the default set, only granted explicitly.
  "approvals:read",
  "approvals:decide",
  // Operator reads and actions the web console uses; never in the default set either.
  "audit:read",
  "clients:read",
  "clients:revoke",
] as const;

export const scopeSchema = z.enum(SCOPES);
export type Scope = z.infer<typeof scopeSchema>;

/** Scopes of a credential enrolled without an explicit list (seed 000, "Cadastro e autorização"). */
export const DEFAULT_ENROLLMENT_SCOPES: readonly Scope[] = [
  "context:read",
  "memory:read",
  "memory:write",
  "status:read",
  "doctor:read",
  "connector:read",
];

/** Parses a comma/space separated scope list; unknown names are an error naming them. */
export function parseScopeList(text: string): Scope[] | { unknown: string[] } {
  const names = text.split(/[\s,]+/).filter((name) => name.length > 0);
  const unknown = names.filter((name) => !scopeSchema.safeParse(name).success);
  if (unknown.length > 0) return { unknown };
  return [...new Set(names as Scope[])];
}

const CONSOLE_VIEWER_SCOPES = [
  "status:read",
  "doctor:read",
  "connector:read",
  "context:read",
  "memory:read",
  "approvals:read",
  "audit:read",
  "clients:read",
] as const satisfies readonly Scope[];
const CONSOLE_APPROVER_SCOPES = [...CONSOLE_VIEWER_SCOPES, "approvals:decide"] as const;

/** The scopes of each web console role (`ivoai server console login --role`): each adds to the one before. */
export const CONSOLE_ROLE_SCOPES = {
  viewer: CONSOLE_VIEWER_SCOPES,
  approver: CONSOLE_APPROVER_SCOPES,
  admin: [...CONSOLE_APPROVER_SCOPES, "clients:revoke"],
} as const satisfies Record<"viewer" | "approver" | "admin", readonly Scope[]>;
