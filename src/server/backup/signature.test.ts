import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverPaths } from "../../config/server-paths.js";
import {
  checkSignature,
  ensureSigningKey,
  SIGNATURE_FILE,
  signatureFor,
  signingKeyFile,
} from "./signature.js";

describe("backup signatures", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-signature-"));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it("tells this server's backups from unsigned, foreign and altered ones", async () => {
    const mine = serverPaths(path.join(dir, "mine"));
    const other = serverPaths(path.join(dir, "other"));
    for (const paths of [mine, other]) await mkdir(paths.root);
    const key = await ensureSigningKey(mine);
    expect(await ensureSigningKey(mine)).toEqual(key);
    expect((await stat(signingKeyFile(mine))).mode & 0o777).toBe(0o600);
    const manifest = Buffer.from('{"format":"ivoai-backup"}\n');
    const backup = path.join(dir, "backup");
    await mkdir(backup);
    expect((await checkSignature(backup, manifest, mine)).status).toBe("unsigned");
    await writeFile(path.join(backup, SIGNATURE_FILE), signatureFor(key, manifest));
    expect((await checkSignature(backup, manifest, mine)).status).toBe("this_server");
    expect((await checkSignature(backup, manifest, other)).status).toBe("foreign");
    await ensureSigningKey(other);
    expect((await checkSignature(backup, manifest, other)).detail).toMatch(/another server's key/);
    await expect(checkSignature(backup, Buffer.from('{"format":"ivoai-backup!"}\n'), mine)).rejects.toThrow(
      /signature does not match manifest.json/,
    );
  });

  it("refuses a key file others may read", async () => {
    const paths = serverPaths(dir);
    await ensureSigningKey(paths);
    await chmod(signingKeyFile(paths), 0o644);
    await expect(ensureSigningKey(paths)).rejects.toThrow(/mode 644 lets others read it/);
  });
});
