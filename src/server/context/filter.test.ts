import { describe, expect, it } from "vitest";
import { decodeText, skipByPath } from "./filter.js";

describe("document filter", () => {
  it("skips secrets, credentials, keys, cloud state and VCS internals by path", () => {
    const skipped = [
      ".env",
      "config/.env.production",
      "deploy/id_rsa",
      "deploy/id_rsa.md",
      "keys/ID_ED25519.txt",
      "keys/id_ecdsa_sk.pub",
      "id_dsa.bak.md",
      "certs/server.key",
      "certs/server.pem",
      "infra/terraform.tfstate",
      "infra/prod.tfvars",
      "home/.aws/credentials",
      "home/.ssh/config",
      ".git/config",
      "k8s/secrets.yaml",
      "gcp/service-account.json",
      ".npmrc",
      ".netrc",
    ];
    for (const path of skipped) expect(skipByPath(path), path).toBeDefined();
    for (const path of [
      "docs/secrets-rotation.md",
      "README.md",
      "src/token-bucket.ts",
      "notes/keys.md",
      "docs/id_rsa_rotation.md",
    ]) {
      expect(skipByPath(path), path).toBeUndefined();
    }
  });

  it("refuses binary content and invalid UTF-8, keeps text and drops a BOM", () => {
    expect(() => decodeText(Buffer.from([0x48, 0x00, 0x49]))).toThrow(/binary/);
    expect(() => decodeText(Buffer.from([0xc3, 0x28]))).toThrow(/invalid UTF-8/);
    expect(() => decodeText(Buffer.from("\x01\x02\x03\x04\x05\x06abc"))).toThrow(/binary/);
    expect(decodeText(Buffer.from("\ufeffolá"))).toBe("olá");
  });
});
