// The persisted enrollment state: hashed single-use codes and hashed client credentials, never the values.
import { z } from "zod";
import { scopeSchema } from "../../protocol/scopes.js";

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const enrollmentRecordSchema = z.object({
  id: z.string(),
  code_sha256: sha256Hex,
  created_at: z.string(),
  expires_at: z.string(),
  scopes: z.array(scopeSchema),
  consumed_at: z.string().nullable(),
  consumed_by: z.string().nullable(),
  revoked_at: z.string().nullable(),
});

export const clientRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  credential_sha256: sha256Hex,
  scopes: z.array(scopeSchema),
  created_at: z.string(),
  enrollment_id: z.string(),
  revoked_at: z.string().nullable(),
});

export const enrollmentStateSchema = z.object({
  version: z.literal(1),
  enrollments: z.array(enrollmentRecordSchema),
  clients: z.array(clientRecordSchema),
});

export type EnrollmentRecord = z.infer<typeof enrollmentRecordSchema>;
export type ClientRecord = z.infer<typeof clientRecordSchema>;
export type EnrollmentState = z.infer<typeof enrollmentStateSchema>;

export function emptyEnrollmentState(): EnrollmentState {
  return { version: 1, enrollments: [], clients: [] };
}

export type EnrollmentStatus = "pending" | "consumed" | "revoked" | "expired";

export function enrollmentStatus(record: EnrollmentRecord, now: Date): EnrollmentStatus {
  if (record.revoked_at) return "revoked";
  if (record.consumed_at) return "consumed";
  if (Date.parse(record.expires_at) <= now.getTime()) return "expired";
  return "pending";
}
