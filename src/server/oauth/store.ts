// OAuth state on SQLite or PostgreSQL: registered clients, activation codes, authorization requests and codes,
// grants (one per refresh family) and tokens. Secrets (activation codes, codes, tokens, CSRF values) are stored only
// as SHA-256 hashes. Nothing is cached in process: every replica reads the database on every request, so a
// revocation made on one is refused by all on the next request; single-use spends are conditional updates.
import { sha256Hex } from "../../shared/tokens.js";
import { migrate } from "../store/migrations.js";
import { forUpdate, type SqlDatabase, type SqlExecutor } from "../store/sql.js";
import { adoptUnversionedSqlite, OAUTH_MIGRATIONS } from "./store-schema.js";

export { LEGACY_GRANT_TTL_MS } from "./store-schema.js";

export interface OAuthClient {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  created_at: string;
}

/**
 * One consent's worth of access: the refresh family a code exchange starts. Rotation keeps the family, never
 * its absolute `expires_at`.
 */
export interface Grant {
  id: string;
  client_id: string;
  scopes: string[];
  resource: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/** What an operator sees of a grant: metadata only, never a token or a hash. */
export interface GrantView extends Grant {
  /** When its refresh token was last rotated; null if never. */
  last_refreshed_at: string | null;
}

/** What an operator sees of a registered client, with its grants. */
export interface OAuthClientView extends OAuthClient {
  revoked_at: string | null;
  grants: GrantView[];
}

export interface PendingAuthorization {
  id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scopes: string[];
  state: string | null;
  csrf_sha256: string;
  expires_at: string;
  /** Wrong activation codes already typed for this request (it is re-issued after each). */
  failed_attempts?: number;
}

export interface AuthorizationCode {
  code_sha256: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scopes: string[];
  expires_at: string;
  used_at: string | null;
}

export interface TokenRecord {
  token_sha256: string;
  kind: "access" | "refresh";
  family: string;
  client_id: string;
  scopes: string[];
  resource: string;
  expires_at: string;
  revoked_at: string | null;
  used_at: string | null;
  code_sha256: string | null;
}

/** What a refresh rotation did: new tokens stored, a reuse (the family is now revoked), or a grant that ended. */
export type RotationOutcome = "rotated" | "reused" | "ended";

export interface OAuthStore {
  addClient(client: OAuthClient): Promise<void>;
  /** A registered client that was not revoked. */
  getClient(id: string): Promise<OAuthClient | undefined>;
  /** Every registered client, revoked ones included, with its grants (newest first). */
  listClients(): Promise<OAuthClientView[]>;
  /** Revokes a client, all its grants and every token issued to it; undefined for an unknown id. */
  revokeClient(id: string, now: string): Promise<OAuthClientView | undefined>;
  addGrant(grant: Grant): Promise<void>;
  getGrant(id: string): Promise<Grant | undefined>;
  /** Revokes a grant and every token of its family; undefined for an unknown id. */
  revokeGrant(id: string, now: string): Promise<GrantView | undefined>;
  addActivationCode(code: string, expiresAt: string, createdAt: string): Promise<string>;
  /** Consumes a valid activation code atomically; false for unknown, used or expired ones. */
  consumeActivationCode(code: string, now: string): Promise<boolean>;
  addPending(request: PendingAuthorization): Promise<void>;
  /** Takes a pending request exactly once (it is deleted); undefined when unknown, taken or expired. */
  takePending(id: string, now: string): Promise<PendingAuthorization | undefined>;
  addCode(code: AuthorizationCode): Promise<void>;
  /** The code as stored (used_at set when it was already spent). */
  peekCode(code: string): Promise<AuthorizationCode | undefined>;
  /**
   * Spends a code exactly once, and in the same transaction stores the grant it starts and that grant's first
   * tokens; false (nothing stored) when the code was already spent, by this replica or another.
   */
  redeemCode(code: string, now: string, issue: { grant: Grant; tokens: TokenRecord[] }): Promise<boolean>;
  /** Drops expired pending requests, and codes, tokens and grants that ended more than a day ago. */
  prune(now: string): Promise<void>;
  addToken(token: TokenRecord): Promise<void>;
  /** The token as it stands: revoked or expired with its grant or client too. */
  getToken(token: string): Promise<TokenRecord | undefined>;
  /**
   * Rotates a refresh token atomically: marks it used and stores `next` (tokens of the same family). A token
   * already used or revoked is a reuse, which revokes the whole family in the same transaction; a grant that was
   * revoked or expired meanwhile stores nothing.
   */
  rotateRefreshToken(token: string, now: string, next: TokenRecord[]): Promise<RotationOutcome>;
  /** Revokes a refresh family (its grant and all its tokens). */
  revokeFamily(family: string, now: string): Promise<void>;
  revokeToken(token: string, now: string): Promise<void>;
  /** Revokes every family issued from a code (a replayed code, OAuth 2.1 §4.1.2). */
  revokeFromCode(codeSha256: string, now: string): Promise<void>;
  /** Closes the database the store was opened on. */
  close(): Promise<void>;
}

type Row = Record<string, unknown>;

const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);

const toClient = (row: Row): OAuthClient & { revoked_at: string | null } => ({
  client_id: String(row.client_id),
  client_name: text(row.client_name),
  redirect_uris: JSON.parse(String(row.redirect_uris)) as string[],
  created_at: String(row.created_at),
  revoked_at: text(row.revoked_at),
});

const toGrant = (row: Row): GrantView => ({
  id: String(row.id),
  client_id: String(row.client_id),
  scopes: JSON.parse(String(row.scopes)) as string[],
  resource: String(row.resource),
  created_at: String(row.created_at),
  expires_at: String(row.expires_at),
  revoked_at: text(row.revoked_at),
  last_refreshed_at: text(row.last_refreshed_at),
});

const toToken = (row: Row): TokenRecord => ({
  token_sha256: String(row.token_sha256),
  kind: row.kind === "refresh" ? "refresh" : "access",
  family: String(row.family),
  client_id: String(row.client_id),
  scopes: JSON.parse(String(row.scopes)) as string[],
  resource: String(row.resource),
  expires_at: String(row.expires_at),
  revoked_at: text(row.revoked_at),
  used_at: text(row.used_at),
  code_sha256: text(row.code_sha256),
});

const GRANT_COLUMNS = `g.id, g.client_id, g.scopes, g.resource, g.created_at, g.expires_at, g.revoked_at,
  (SELECT MAX(t.used_at) FROM tokens t WHERE t.family = g.id AND t.kind = 'refresh') AS last_refreshed_at`;

/** Newest first; ties by id, in code so both backends agree whatever their collation. */
const byCreatedDesc = (a: GrantView, b: GrantView) =>
  a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? 1 : -1;

async function grantView(db: SqlExecutor, id: string): Promise<GrantView | undefined> {
  const row = await db.get<Row>(`SELECT ${GRANT_COLUMNS} FROM grants g WHERE g.id = $1`, [id]);
  return row ? toGrant(row) : undefined;
}

async function clientView(db: SqlExecutor, row: Row): Promise<OAuthClientView> {
  const grants = await db.all<Row>(`SELECT ${GRANT_COLUMNS} FROM grants g WHERE g.client_id = $1`, [
    row.client_id,
  ]);
  return { ...toClient(row), grants: grants.map(toGrant).sort(byCreatedDesc) };
}

async function insertGrant(db: SqlExecutor, grant: Grant): Promise<void> {
  await db.run(
    `INSERT INTO grants (id, client_id, scopes, resource, created_at, expires_at, revoked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      grant.id,
      grant.client_id,
      JSON.stringify(grant.scopes),
      grant.resource,
      grant.created_at,
      grant.expires_at,
      grant.revoked_at,
    ],
  );
}

async function insertToken(db: SqlExecutor, token: TokenRecord): Promise<void> {
  await db.run(
    `INSERT INTO tokens (token_sha256, kind, family, client_id, scopes, resource, expires_at, revoked_at, used_at, code_sha256)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      token.token_sha256,
      token.kind,
      token.family,
      token.client_id,
      JSON.stringify(token.scopes),
      token.resource,
      token.expires_at,
      token.revoked_at,
      token.used_at,
      token.code_sha256,
    ],
  );
}

/** Grant first, then its tokens: the order every writer of a family takes its row locks in. */
async function revokeFamilyIn(db: SqlExecutor, family: string, now: string): Promise<void> {
  await db.run("UPDATE grants SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2", [now, family]);
  await db.run("UPDATE tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE family = $2", [now, family]);
}

/**
 * The OAuth store on `db`, which it migrates first (refusing a database a newer ivoai migrated) and closes on
 * close(). `db` is SQLite (the embedded default) or PostgreSQL (schema ivoai_oauth, shared by every replica).
 */
export async function openOAuthStore(db: SqlDatabase): Promise<OAuthStore> {
  try {
    await adoptUnversionedSqlite(db);
    await migrate(db, "oauth", OAUTH_MIGRATIONS);
  } catch (error) {
    await db.close();
    throw error;
  }
  return { ...clientRecords(db), ...authorizationFlow(db), ...tokenRecords(db) };
}

/** Registered clients and their grants (the console's Web MCP list). */
function clientRecords(
  db: SqlDatabase,
): Pick<
  OAuthStore,
  "addClient" | "getClient" | "listClients" | "revokeClient" | "addGrant" | "getGrant" | "revokeGrant"
> {
  return {
    async addClient(client) {
      await db.run(
        "INSERT INTO clients (client_id, client_name, redirect_uris, created_at) VALUES ($1, $2, $3, $4)",
        [client.client_id, client.client_name, JSON.stringify(client.redirect_uris), client.created_at],
      );
    },
    async getClient(id) {
      const row = await db.get<Row>("SELECT * FROM clients WHERE client_id = $1 AND revoked_at IS NULL", [
        id,
      ]);
      if (!row) return undefined;
      const { revoked_at: _revoked, ...client } = toClient(row);
      return client;
    },
    async listClients() {
      const clients = (await db.all<Row>("SELECT * FROM clients")).map(toClient);
      const grants = (await db.all<Row>(`SELECT ${GRANT_COLUMNS} FROM grants g`)).map(toGrant);
      const byClient = new Map<string, GrantView[]>();
      for (const grant of grants.sort(byCreatedDesc)) {
        const list = byClient.get(grant.client_id) ?? [];
        list.push(grant);
        byClient.set(grant.client_id, list);
      }
      return clients
        .sort((a, b) =>
          a.created_at === b.created_at
            ? a.client_id < b.client_id
              ? -1
              : 1
            : a.created_at < b.created_at
              ? -1
              : 1,
        )
        .map((client) => ({ ...client, grants: byClient.get(client.client_id) ?? [] }));
    },
    revokeClient(id, now) {
      return db.transaction(async (tx) => {
        const found = await tx.get(
          `SELECT client_id FROM clients WHERE client_id = $1${forUpdate(tx.dialect)}`,
          [id],
        );
        if (!found) return undefined;
        await tx.run("UPDATE clients SET revoked_at = COALESCE(revoked_at, $1) WHERE client_id = $2", [
          now,
          id,
        ]);
        await tx.run("UPDATE grants SET revoked_at = COALESCE(revoked_at, $1) WHERE client_id = $2", [
          now,
          id,
        ]);
        await tx.run("UPDATE tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE client_id = $2", [
          now,
          id,
        ]);
        return clientView(tx, (await tx.get<Row>("SELECT * FROM clients WHERE client_id = $1", [id])) as Row);
      });
    },
    addGrant: (grant) => insertGrant(db, grant),
    async getGrant(id) {
      const view = await grantView(db, id);
      if (!view) return undefined;
      const { last_refreshed_at: _last, ...grant } = view;
      return grant;
    },
    revokeGrant(id, now) {
      return db.transaction(async (tx) => {
        const found = await tx.get(`SELECT id FROM grants WHERE id = $1${forUpdate(tx.dialect)}`, [id]);
        if (!found) return undefined;
        await revokeFamilyIn(tx, id, now);
        return grantView(tx, id);
      });
    },
  };
}

/** What lives between a sign-in and its tokens: activation codes, pending authorizations and codes. */
function authorizationFlow(
  db: SqlDatabase,
): Pick<
  OAuthStore,
  | "addActivationCode"
  | "consumeActivationCode"
  | "addPending"
  | "takePending"
  | "addCode"
  | "peekCode"
  | "redeemCode"
  | "prune"
> {
  return {
    async addActivationCode(code, expiresAt, createdAt) {
      const id = `act_${sha256Hex(code).slice(0, 12)}`;
      await db.run(
        "INSERT INTO activation_codes (code_sha256, id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
        [sha256Hex(code), id, createdAt, expiresAt],
      );
      return id;
    },
    async consumeActivationCode(code, now) {
      const spent = await db.run(
        "UPDATE activation_codes SET used_at = $1 WHERE code_sha256 = $2 AND used_at IS NULL AND expires_at > $1",
        [now, sha256Hex(code)],
      );
      return spent.changes === 1;
    },
    async addPending(request) {
      await db.run("INSERT INTO pending (id, body, expires_at, client_id) VALUES ($1, $2, $3, $4)", [
        request.id,
        JSON.stringify(request),
        request.expires_at,
        request.client_id,
      ]);
      await db.run("DELETE FROM pending WHERE expires_at < $1", [
        new Date(Date.now() - 86_400_000).toISOString(),
      ]);
    },
    async takePending(id, now) {
      const row = await db.get<{ body: string; expires_at: string }>(
        "DELETE FROM pending WHERE id = $1 RETURNING body, expires_at",
        [id],
      );
      return row && row.expires_at > now ? (JSON.parse(row.body) as PendingAuthorization) : undefined;
    },
    async addCode(code) {
      await db.run(
        "INSERT INTO codes (code_sha256, body, used_at, client_id, expires_at) VALUES ($1, $2, $3, $4, $5)",
        [code.code_sha256, JSON.stringify(code), code.used_at, code.client_id, code.expires_at],
      );
    },
    async peekCode(code) {
      const row = await db.get<{ body: string; used_at: string | null }>(
        "SELECT body, used_at FROM codes WHERE code_sha256 = $1",
        [sha256Hex(code)],
      );
      return row ? { ...(JSON.parse(row.body) as AuthorizationCode), used_at: text(row.used_at) } : undefined;
    },
    redeemCode(code, now, issue) {
      return db.transaction(async (tx) => {
        const spent = await tx.run(
          "UPDATE codes SET used_at = $1 WHERE code_sha256 = $2 AND used_at IS NULL",
          [now, sha256Hex(code)],
        );
        if (spent.changes !== 1) return false;
        await insertGrant(tx, issue.grant);
        for (const token of issue.tokens) await insertToken(tx, token);
        return true;
      });
    },
    async prune(now) {
      const dayAgo = new Date(Date.parse(now) - 86_400_000).toISOString();
      await db.run("DELETE FROM pending WHERE expires_at < $1", [now]);
      await db.run("DELETE FROM codes WHERE expires_at < $1", [dayAgo]);
      await db.run("DELETE FROM tokens WHERE expires_at < $1", [dayAgo]);
      await db.run("DELETE FROM grants WHERE expires_at < $1", [dayAgo]);
      await db.run("DELETE FROM activation_codes WHERE expires_at < $1", [dayAgo]);
      // Registration is open: a client that never completed an authorization within a day is forgotten
      // (it registers again if it comes back), so registrations cannot grow `server clients list` forever.
      await db.run(
        `DELETE FROM clients WHERE created_at < $1
           AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.client_id = clients.client_id)
           AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.client_id = clients.client_id)
           AND NOT EXISTS (SELECT 1 FROM pending p WHERE p.client_id = clients.client_id)
           AND NOT EXISTS (SELECT 1 FROM codes k WHERE k.client_id = clients.client_id)`,
        [dayAgo],
      );
    },
  };
}

/** Access and refresh tokens: lookup, rotation and revocation. */
function tokenRecords(
  db: SqlDatabase,
): Pick<
  OAuthStore,
  "addToken" | "getToken" | "rotateRefreshToken" | "revokeFamily" | "revokeToken" | "revokeFromCode" | "close"
> {
  return {
    addToken: (token) => insertToken(db, token),
    async getToken(token) {
      // A token ends with its grant and its client, even one issued while they were being revoked.
      const row = await db.get<Row>(
        `SELECT t.token_sha256, t.kind, t.family, t.client_id, t.scopes, t.resource, t.used_at, t.code_sha256,
           CASE WHEN g.expires_at IS NOT NULL AND g.expires_at < t.expires_at THEN g.expires_at ELSE t.expires_at END
             AS expires_at,
           COALESCE(t.revoked_at, g.revoked_at, c.revoked_at) AS revoked_at
         FROM tokens t LEFT JOIN grants g ON g.id = t.family LEFT JOIN clients c ON c.client_id = t.client_id
         WHERE t.token_sha256 = $1`,
        [sha256Hex(token)],
      );
      return row ? toToken(row) : undefined;
    },
    rotateRefreshToken(token, now, next) {
      return db.transaction(async (tx): Promise<RotationOutcome> => {
        const hash = sha256Hex(token);
        const record = await tx.get<{ family: string }>(
          "SELECT family FROM tokens WHERE token_sha256 = $1 AND kind = 'refresh'",
          [hash],
        );
        if (!record) return "ended";
        // The grant's row lock orders this rotation against a revocation of the family on another replica.
        const grant = await tx.get<{ revoked_at: string | null; expires_at: string }>(
          `SELECT revoked_at, expires_at FROM grants WHERE id = $1${forUpdate(tx.dialect)}`,
          [record.family],
        );
        if (!grant || grant.revoked_at || grant.expires_at <= now) return "ended";
        const used = await tx.run(
          "UPDATE tokens SET used_at = $1 WHERE token_sha256 = $2 AND used_at IS NULL AND revoked_at IS NULL",
          [now, hash],
        );
        if (used.changes !== 1) {
          // Reuse of a rotated (or revoked) refresh token: the whole family is revoked.
          await revokeFamilyIn(tx, record.family, now);
          return "reused";
        }
        for (const fresh of next) await insertToken(tx, { ...fresh, family: record.family });
        return "rotated";
      });
    },
    revokeFamily: (family, now) => db.transaction((tx) => revokeFamilyIn(tx, family, now)),
    async revokeToken(token, now) {
      await db.run("UPDATE tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE token_sha256 = $2", [
        now,
        sha256Hex(token),
      ]);
    },
    revokeFromCode(codeSha256, now) {
      return db.transaction(async (tx) => {
        const families = await tx.all<{ family: string }>(
          "SELECT DISTINCT family FROM tokens WHERE code_sha256 = $1",
          [codeSha256],
        );
        for (const { family } of families) await revokeFamilyIn(tx, family, now);
      });
    },
    close: () => db.close(),
  };
}
