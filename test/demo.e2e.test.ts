// The README's main command: the demo must run on embedded defaults and leave nothing behind.
import { access } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runIvoai } from "./helpers.js";

describe("ivoai demo", () => {
  it("starts a server, enrolls a client through HTTP and prints discovery, then cleans up", async () => {
    const result = await runIvoai(["demo", "--json"]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      url: string;
      client_id: string;
      root: string | null;
      status: { caller: { id: string } };
      discovery: { protocol_version: number; public_base_url: string; features: { context: boolean } };
      search: { tools: string[]; structured: { status: string; data: { results: { path: string }[] } } };
    };
    expect(report.discovery.protocol_version).toBe(1);
    expect(report.discovery.public_base_url).toBe(report.url);
    expect(report.status.caller.id).toBe(report.client_id);
    expect(report.discovery.features.context).toBe(true);
    expect(report.search.tools).toContain("context_search");
    expect(report.search.structured.status).toBe("SUCCESS");
    expect(report.search.structured.data.results[0]?.path).toBe("runbooks/deploy-billing.md");
    expect(result.stdout + result.stderr).not.toMatch(/ivoai_(cred|enr)_/);
    const root = /under (\S+)/.exec(result.stderr)?.[1] ?? "";
    expect(root).toContain("ivoai-demo-");
    await expect(access(root)).rejects.toThrow(/ENOENT/);
  });
});
