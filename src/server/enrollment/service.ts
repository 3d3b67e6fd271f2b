// Enrollment and client credentials: single-use codes exchanged for scoped, revocable bearer credentials.
import { DEFAULT_ENROLLMENT_SCOPES, type Scope } from "../../protocol/scopes.js";
import { IvoaiError } from "../../shared/errors.js";
import { findByHash, newId, newSecret, sha256Hex } from "../../shared/tokens.js";
import {
  type ClientRecord,
  type EnrollmentRecord,
  type EnrollmentState,
  type EnrollmentStatus,
  enrollmentStatus,
} from "./state.js";
import type { EnrollmentStore } from "./store.js";

export const ENROLLMENT_CODE_PREFIX = "ivoai_enr_";
export const CLIENT_CREDENTIAL_PREFIX = "ivoai_cred_";

/** Records that ended (consumed, revoked, expired) are kept this long for `list`, then pruned. */
const RETAIN_ENDED_MS = 30 * 86_400_000;

export interface EnrollmentView {
  id: string;
  status: EnrollmentStatus;
  scopes: Scope[];
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
  consumed_by: string | null;
  revoked_at: string | null;
}

export interface ClientView {
  id: string;
  name: string;
  scopes: Scope[];
  created_at: string;
  enrollment_id: string;
  revoked_at: string | null;
}

export interface AuthenticatedClient {
  id: string;
  name: string;
  scopes: readonly Scope[];
}

export type ExchangeResult =
  | { ok: true; client: ClientView; credential: string }
  | { ok: false; reason: "invalid" | "expired" | "consumed" | "revoked" };

export interface EnrollmentService {
  createCode(input: {
    ttlMs: number;
    scopes?: readonly Scope[];
  }): Promise<{ code: string; enrollment: EnrollmentView }>;
  listCodes(): Promise<EnrollmentView[]>;
  revokeCode(id: string): Promise<EnrollmentView>;
  exchange(code: string, clientName: string): Promise<ExchangeResult>;
  authenticate(credential: string): Promise<AuthenticatedClient | undefined>;
  listClients(): Promise<ClientView[]>;
  revokeClient(id: string): Promise<ClientView>;
}

export interface EnrollmentServiceDeps {
  store: EnrollmentStore;
  now?: () => Date;
}

export function createEnrollmentService(deps: EnrollmentServiceDeps): EnrollmentService {
  const { store } = deps;
  const now = deps.now ?? (() => new Date());

  return {
    async createCode({ ttlMs, scopes }) {
      const code = newSecret(ENROLLMENT_CODE_PREFIX);
      const at = now();
      const record: EnrollmentRecord = {
        id: newId("enr_"),
        code_sha256: sha256Hex(code),
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + ttlMs).toISOString(),
        scopes: [...(scopes ?? DEFAULT_ENROLLMENT_SCOPES)],
        consumed_at: null,
        consumed_by: null,
        revoked_at: null,
      };
      await store.mutate((state) => {
        const kept = prune(state, at);
        return { state: { ...kept, enrollments: [...kept.enrollments, record] }, result: undefined };
      });
      return { code, enrollment: viewEnrollment(record, at) };
    },

    async listCodes() {
      const at = now();
      return (await store.read()).enrollments.map((record) => viewEnrollment(record, at));
    },

    revokeCode(id) {
      return store.mutate((state) => {
        const at = now();
        const record = state.enrollments.find((entry) => entry.id === id);
        if (!record) throw new IvoaiError("NOT_FOUND", `no enrollment code with id ${id}`);
        if (!record.revoked_at && !record.consumed_at) record.revoked_at = at.toISOString();
        return { state, result: viewEnrollment(record, at) };
      });
    },

    async exchange(code, clientName) {
      // Cheap refusal without the lock: a code matching nothing cannot become valid.
      if (!findByHash((await store.read()).enrollments, code, (entry) => entry.code_sha256)) {
        return { ok: false, reason: "invalid" };
      }
      return store.mutate<ExchangeResult>((state) => {
        const at = now();
        const record = findByHash(state.enrollments, code, (entry) => entry.code_sha256);
        if (!record) return { state, result: { ok: false, reason: "invalid" } };
        const status = enrollmentStatus(record, at);
        if (status !== "pending") return { state, result: { ok: false, reason: status } };
        const credential = newSecret(CLIENT_CREDENTIAL_PREFIX);
        const client: ClientRecord = {
          id: newId("cli_"),
          name: clientName,
          credential_sha256: sha256Hex(credential),
          scopes: record.scopes,
          created_at: at.toISOString(),
          enrollment_id: record.id,
          revoked_at: null,
        };
        record.consumed_at = at.toISOString();
        record.consumed_by = client.id;
        state.clients.push(client);
        return { state, result: { ok: true, client: viewClient(client), credential } };
      });
    },

    async authenticate(credential) {
      if (!credential.startsWith(CLIENT_CREDENTIAL_PREFIX)) return undefined;
      return credentialIndex(await store.read()).get(sha256Hex(credential));
    },

    async listClients() {
      return (await store.read()).clients.map(viewClient);
    },

    revokeClient(id) {
      return store.mutate((state) => {
        const record = state.clients.find((entry) => entry.id === id);
        if (!record) throw new IvoaiError("NOT_FOUND", `no client with id ${id}`);
        record.revoked_at ??= now().toISOString();
        return { state, result: viewClient(record) };
      });
    },
  };
}

const credentialIndexes = new WeakMap<EnrollmentState, ReadonlyMap<string, AuthenticatedClient>>();

/**
 * The clients a credential may act as, by the credential's hash, built once per state. The store hands out
 * the same state object until the file changes (its identity is checked on every read), and every revocation
 * replaces the file, in this process or another: the request after a revocation sees a new state and a new
 * index without it. Revoked clients are not in the index at all. A map lookup by hash needs no
 * constant-time compare: the caller controls the preimage, not the hash.
 */
function credentialIndex(state: EnrollmentState): ReadonlyMap<string, AuthenticatedClient> {
  let index = credentialIndexes.get(state);
  if (!index) {
    index = new Map(
      state.clients
        .filter((record) => !record.revoked_at)
        .map((record) => [
          record.credential_sha256,
          Object.freeze({ id: record.id, name: record.name, scopes: Object.freeze([...record.scopes]) }),
        ]),
    );
    credentialIndexes.set(state, index);
  }
  return index;
}

function prune(state: EnrollmentState, at: Date): EnrollmentState {
  const cutoff = at.getTime() - RETAIN_ENDED_MS;
  const ended = (record: EnrollmentRecord) => {
    const end = record.consumed_at ?? record.revoked_at ?? record.expires_at;
    return Date.parse(end) < cutoff;
  };
  return { ...state, enrollments: state.enrollments.filter((record) => !ended(record)) };
}

function viewEnrollment(record: EnrollmentRecord, at: Date): EnrollmentView {
  const { code_sha256: _hash, ...rest } = record;
  return { ...rest, status: enrollmentStatus(record, at) };
}

function viewClient(record: ClientRecord): ClientView {
  const { credential_sha256: _hash, ...rest } = record;
  return rest;
}
