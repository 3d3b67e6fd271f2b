import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeServer, startFakeIvoai } from "../../../test/fixtures/fake-ivoai.js";
import type { ServerProfile } from "../../config/client-config.js";
import { isIvoaiError } from "../../shared/errors.js";
import { openRegistry } from "../connections/registry.js";
import { resolveSourceNames, selectSources } from "./selection.js";

const profile = (
  alias: string,
  purpose: string,
  extra: Partial<ServerProfile> = {},
  url = "http://127.0.0.1:9",
): ServerProfile => ({
  id: `srv_${alias}`,
  alias,
  url,
  purpose,
  priority: 100,
  enabled: true,
  protocol_version: 1,
  endpoints: { context: "/v1/mcp/context", memory: "/v1/memory/mcp", hooks: "/v1/memory" },
  features: {},
  ...extra,
});

const aliases = (profiles: ServerProfile[]) => profiles.map((entry) => entry.alias).sort();

describe("resolving --knowledge-source names", () => {
  const profiles = [
    profile("mindsite-1", "mindsite", { redundancy_group: "mindsite", priority: 10 }),
    profile("mindsite-2", "mindsite", { redundancy_group: "mindsite", priority: 20 }),
    profile("acme", "acme"),
    profile("docs", "wiki"),
    profile("notes-a", "docs"),
    profile("notes-b", "docs"),
    profile("legacy", "archive", { redundancy_group: "mindsite-old" }),
  ];

  it("takes an alias, an id, a purpose or a redundancy group", () => {
    const [byAlias, byId, byPurpose, byGroup] = resolveSourceNames(profiles, [
      "acme",
      "srv_mindsite-2",
      "mindsite",
      "mindsite-old",
    ]);
    expect(byAlias).toMatchObject({ kind: "alias" });
    expect(aliases(byAlias?.profiles ?? [])).toEqual(["acme"]);
    expect(byId).toMatchObject({ kind: "id" });
    expect(aliases(byId?.profiles ?? [])).toEqual(["mindsite-2"]);
    // Purpose and group name the same two servers here: one meaning, not an ambiguity.
    expect(aliases(byPurpose?.profiles ?? [])).toEqual(["mindsite-1", "mindsite-2"]);
    expect(aliases(byGroup?.profiles ?? [])).toEqual(["legacy"]);
  });

  it("refuses a name whose readings disagree, listing every match", () => {
    let caught: unknown;
    try {
      resolveSourceNames(profiles, ["docs"]);
    } catch (error) {
      caught = error;
    }
    expect(isIvoaiError(caught)).toBe(true);
    expect((caught as Error).message).toBe(
      "knowledge source docs is ambiguous: it is the alias of docs; purpose of notes-a, notes-b; " +
        "name the servers by alias instead",
    );
    expect((caught as { code: string }).code).toBe("USAGE");
  });

  it("says a name matching nothing is not connected", () => {
    expect(() => resolveSourceNames(profiles, ["nosuch"])).toThrow(
      /knowledge source nosuch is not connected/,
    );
  });
});

describe("selecting sources", () => {
  let dir: string;
  let healthy: FakeServer;
  let downUrl: string;
  const env = () => ({ HOME: dir, XDG_CONFIG_HOME: path.join(dir, "config") });
  const connect = async (profiles: ServerProfile[], credentials = profiles.map((entry) => entry.id)) => {
    await openRegistry(env()).update((state) => {
      state.profiles.splice(0, state.profiles.length, ...profiles);
      state.secrets.servers = Object.fromEntries(credentials.map((id) => [id, { credential: `cred_${id}` }]));
    });
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-selection-"));
    healthy = await startFakeIvoai("corrupt");
    // A port that refuses connections: a server that has just gone away.
    const gone = http.createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    downUrl = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    await new Promise((resolve) => gone.close(resolve));
  });
  afterAll(async () => {
    await healthy.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("starts a group whose primary is down, by group, purpose or members, keeping the primary for failover", async () => {
    await connect([
      profile("mindsite-1", "mindsite", { redundancy_group: "mindsite", priority: 10 }, downUrl),
      profile("mindsite-2", "mindsite", { redundancy_group: "mindsite", priority: 20 }, healthy.url),
    ]);
    for (const names of [["mindsite"], ["mindsite-1", "mindsite-2"]]) {
      const sources = await selectSources(openRegistry(env()), names);
      expect(sources.map((source) => source.profile.alias).sort()).toEqual(["mindsite-1", "mindsite-2"]);
    }
    await expect(selectSources(openRegistry(env()), ["mindsite-1"])).rejects.toThrow(
      /knowledge source mindsite-1 is unavailable/,
    );
  });

  it("fails when no member of a selected group answers", async () => {
    await connect([
      profile("mindsite-1", "mindsite", { redundancy_group: "mindsite" }, downUrl),
      profile("mindsite-2", "mindsite", { redundancy_group: "mindsite" }, downUrl),
    ]);
    await expect(selectSources(openRegistry(env()), ["mindsite"])).rejects.toThrow(
      /knowledge sources mindsite-1, mindsite-2 \(one redundancy group\) are all unavailable/,
    );
  });

  it("leaves out disabled and credential-less members of a purpose, but refuses them by alias", async () => {
    await connect(
      [
        profile("a", "docs"),
        profile("b", "docs", { enabled: false }),
        profile("c", "docs"),
        profile("d", "other", { enabled: false }),
      ],
      ["srv_a", "srv_b"],
    );
    const sources = await selectSources(openRegistry(env()), ["docs"], { checkReady: false });
    expect(sources.map((source) => source.profile.alias)).toEqual(["a"]);
    await expect(selectSources(openRegistry(env()), ["b"], { checkReady: false })).rejects.toThrow(
      /knowledge source b is disabled/,
    );
    await expect(selectSources(openRegistry(env()), ["c"], { checkReady: false })).rejects.toThrow(
      /no stored credential/,
    );
    await expect(selectSources(openRegistry(env()), ["other"], { checkReady: false })).rejects.toThrow(
      /every server of purpose other is disabled/,
    );
  });
});
