// Backup signatures: an HMAC-SHA256 over manifest.json's exact bytes with a key kept in the server's secrets
// folder (0600), so that verify and restore can tell "made by this server" from unsigned or another server's.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { ServerPaths } from "../../config/server-paths.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { ensureDirectory, hashFile, ownerFor, regularFileOrAbsent, writeNewFile } from "./safe-files.js";

/** The signature file beside manifest.json (not a manifest entry: older backups simply lack it). */
export const SIGNATURE_FILE = "manifest.sig";
const SIGNATURE_FORMAT = "ivoai-backup-signature";

const signatureSchema = z.object({
  format: z.literal(SIGNATURE_FORMAT),
  algorithm: z.literal("HMAC-SHA256"),
  key_id: z.string().regex(/^[0-9a-f]{16}$/),
  mac: z.string().regex(/^[0-9a-f]{64}$/),
});

/**
 * What a backup's signature says about who made it, for the server whose key was used:
 * this_server (the MAC checks with its key), foreign (signed with another key, or this server has none), unsigned,
 * or unchecked (this user cannot read the server's key).
 * A signature that names this server's key but does not match is never a status: verify refuses it.
 */
export interface SignatureCheck {
  status: "this_server" | "foreign" | "unsigned" | "unchecked";
  /** The key id the backup names, when signed. */
  key_id: string | null;
  /** This server's key id, when it has a key. */
  server_key_id: string | null;
  /** One sentence for the operator. */
  detail: string;
}

/** etc/ivoai/secrets/backup-signing.key: 32 random bytes as hex, 0600, never in a backup. */
export function signingKeyFile(paths: ServerPaths): string {
  return path.join(paths.secretsDir, "backup-signing.key");
}

const keyIdOf = (key: Buffer) =>
  createHash("sha256").update("ivoai-backup-key-id\0").update(key).digest("hex").slice(0, 16);

/**
 * This server's signing key, or undefined when it has none; "unreadable" when this user may not read it. Refuses a
 * linked or group/other-readable key file.
 */
export async function readSigningKey(paths: ServerPaths): Promise<Buffer | "unreadable" | undefined> {
  const file = signingKeyFile(paths);
  let stat: Awaited<ReturnType<typeof regularFileOrAbsent>>;
  try {
    stat = await regularFileOrAbsent(file);
  } catch (error) {
    if (errnoCode(error) === "EACCES") return "unreadable";
    if (errnoCode(error) === "ENOTDIR") return undefined;
    throw error;
  }
  if (!stat) return undefined;
  if ((stat.mode & 0o077) !== 0) {
    throw new IvoaiError(
      "UNSAFE_PATH",
      `refusing the backup signing key ${file}: mode ${(stat.mode & 0o777).toString(8)} lets others read it (chmod 600 it)`,
    );
  }
  let content: Buffer | undefined;
  try {
    ({ content } = await hashFile(file, 1024, { expected: stat, keep: true }));
  } catch (error) {
    if (errnoCode(error) === "EACCES") return "unreadable";
    throw error;
  }
  const text = content?.toString("utf8").trim() ?? "";
  if (!/^[0-9a-f]{64}$/.test(text)) {
    throw new IvoaiError("STATE_CORRUPT", `${file} is not a backup signing key (64 hex digits)`);
  }
  return Buffer.from(text, "hex");
}

/** This server's signing key, created (0600, owned like the secrets folder) the first time a backup is made. */
export async function ensureSigningKey(paths: ServerPaths): Promise<Buffer> {
  const existing = await readSigningKey(paths);
  if (existing === "unreadable") {
    throw new IvoaiError(
      "PERMISSION_DENIED",
      `cannot read the backup signing key ${signingKeyFile(paths)}: run as the server's user`,
    );
  }
  if (existing) return existing;
  await ensureDirectory(paths.root, paths.secretsDir, 0o700);
  const file = signingKeyFile(paths);
  const key = randomBytes(32);
  await writeNewFile(file, Buffer.from(`${key.toString("hex")}\n`));
  const owner = await ownerFor(file);
  if (owner) await fs.lchown(file, owner.uid, owner.gid);
  return key;
}

const macOf = (key: Buffer, manifest: Buffer) => createHmac("sha256", key).update(manifest).digest();

/** The signature file's bytes for a manifest. */
export function signatureFor(key: Buffer, manifest: Buffer): Buffer {
  const body = {
    format: SIGNATURE_FORMAT,
    algorithm: "HMAC-SHA256",
    key_id: keyIdOf(key),
    mac: macOf(key, manifest).toString("hex"),
  };
  return Buffer.from(`${JSON.stringify(body, null, 2)}\n`);
}

/** Checks the signature of a backup directory whose manifest bytes are `manifest` against this server's key. */
export async function checkSignature(
  dir: string,
  manifest: Buffer,
  paths: ServerPaths,
): Promise<SignatureCheck> {
  const read = await readSigningKey(paths);
  const key = read === "unreadable" ? undefined : read;
  const serverKeyId = key ? keyIdOf(key) : null;
  const file = path.join(dir, SIGNATURE_FILE);
  const stat = await regularFileOrAbsent(file);
  if (!stat) {
    return {
      status: "unsigned",
      key_id: null,
      server_key_id: serverKeyId,
      detail:
        "unsigned (made before ivoai signed backups, or its signature was removed): nothing proves who made it",
    };
  }
  const { content } = await hashFile(file, 4096, { expected: stat, keep: true });
  let parsed: z.infer<typeof signatureSchema>;
  try {
    parsed = signatureSchema.parse(JSON.parse(content?.toString("utf8") ?? ""));
  } catch {
    throw new IvoaiError(
      "STATE_CORRUPT",
      `invalid backup: ${SIGNATURE_FILE} is not an ivoai backup signature`,
    );
  }
  if (read === "unreadable") {
    return {
      status: "unchecked",
      key_id: parsed.key_id,
      server_key_id: null,
      detail: `signed with key id ${parsed.key_id}, not checked: this user cannot read ${signingKeyFile(paths)} (run as the server's user)`,
    };
  }
  if (!key || parsed.key_id !== serverKeyId) {
    const whose = key
      ? `another server's key (id ${parsed.key_id}; this server's is ${serverKeyId})`
      : `key id ${parsed.key_id}, and the server at ${paths.root} has no signing key (${signingKeyFile(paths)})`;
    return {
      status: "foreign",
      key_id: parsed.key_id,
      server_key_id: serverKeyId,
      detail: `signed with ${whose}: not made by this server`,
    };
  }
  if (!timingSafeEqual(Buffer.from(parsed.mac, "hex"), macOf(key, manifest))) {
    throw new IvoaiError(
      "STATE_CORRUPT",
      `invalid backup: its signature does not match manifest.json: the manifest was changed after this server signed it`,
    );
  }
  return {
    status: "this_server",
    key_id: parsed.key_id,
    server_key_id: serverKeyId,
    detail: `signed by this server (key id ${parsed.key_id})`,
  };
}
