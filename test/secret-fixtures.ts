// Secret-shaped values for tests, built at run time so that no scanner mistakes a source file for a leak.
import { createHash } from "node:crypto";

/** Deterministic pseudo-random bytes. */
export const random = (seed: string, bytes: number) =>
  createHash("sha512").update(seed).digest().subarray(0, bytes);
const pem = (label: string) =>
  `-----BEGIN ${label}-----\n${random("k1", 48).toString("base64")}\n${random("k2", 48).toString("base64")}\n-----END ${label}-----\n`;
export const AWS_ID = ["AK", "IA", "Q3EGDZ2W7XKJ5MNB"].join("");
export const AWS_SECRET = random("aws", 30).toString("base64");
export const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
export const jwt = (payload: Record<string, unknown>) =>
  `${b64url({ alg: "HS256", typ: "JWT" })}.${b64url(payload)}.${random("sig", 32).toString("base64url")}`;
/** One document text per secret kind (a label in brackets names a variant). */
export const SECRETS: Record<string, string> = {
  "private key": `notes\n${pem("OPENSSH PRIVATE KEY")}`,
  "private key (encrypted PEM)": pem("RSA PRIVATE KEY").replace(
    "KEY-----\n",
    "KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C3D\n\n",
  ),
  "private key (PGP)": pem("PGP PRIVATE KEY BLOCK").replace("BLOCK-----\n", "BLOCK-----\nVersion: 1\n\n"),
  "AWS access key": `[default]\naws_access_key_id = ${AWS_ID}\naws_secret_access_key = ${AWS_SECRET}\n`,
  "GitHub token": `export GH=${["gh", "p_"].join("")}${random("gh", 27).toString("base64").replace(/[+/]/g, "x")}\n`,
  "GitHub token (fine-grained)": `${["github", "_pat_"].join("")}11ABCDEFG0abcdefghij12_${random("pat", 45).toString("base64url").replace(/-/g, "x").slice(0, 59)}`,
  "Slack token": `SLACK=${["xo", "xb-"].join("")}123456789012-1234567890123-${random("sl", 18).toString("base64url")}`,
  JWT: `Authorization: Bearer ${jwt({ sub: "ana", exp: 1_893_456_000 })}`,
};
