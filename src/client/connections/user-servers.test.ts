// The user's MCP servers in the one registry: config.toml holds what is not secret, secrets.json the values.
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseClientConfig, renderClientConfig } from "../../config/client-config.js";
import { openRegistry } from "./registry.js";
import { enabledUserServers, exposedToolName, resolveUserServer, toolAllowed } from "./user-servers.js";

function registryIn() {
  const home = mkdtempSync(path.join(tmpdir(), "ivoai-user-mcp-"));
  return openRegistry({ HOME: home, XDG_CONFIG_HOME: path.join(home, "config") });
}

describe("user MCP servers", () => {
  it("keeps config and secret values apart, and drops a removed server's secrets with it", async () => {
    const registry = registryIn();
    await registry.update((state) => {
      state.userServers.push(
        {
          name: "docs",
          transport: "http",
          url: "https://mcp.example.com/mcp",
          enabled: true,
          read_only: true,
          required: false,
          secret_headers: ["Authorization"],
          secret_env: [],
        },
        {
          name: "tools",
          transport: "stdio",
          command: "node",
          args: ["server.mjs"],
          enabled: false,
          read_only: false,
          required: false,
          tools: ["echo"],
          prefix: "t",
          secret_headers: [],
          secret_env: ["API_KEY"],
        },
      );
      state.secrets.mcp_servers = {
        docs: { headers: { Authorization: "Bearer s3cret-header" }, env: {} },
        tools: { headers: {}, env: { API_KEY: "s3cret-env" } },
      };
    });
    const config = readFileSync(registry.paths.configFile, "utf8");
    expect(config).toContain("[mcp_servers.docs]");
    expect(config).not.toMatch(/s3cret/);
    expect(statSync(registry.paths.secretsFile).mode & 0o777).toBe(0o600);

    const snapshot = await registry.read();
    expect(resolveUserServer(snapshot, "docs").secrets.headers).toEqual({
      Authorization: "Bearer s3cret-header",
    });
    expect((await enabledUserServers(registry)).map((server) => server.name)).toEqual(["docs"]);
    expect(() => resolveUserServer(snapshot, "nope")).toThrow(/no MCP server named nope/);

    await registry.update((state) => {
      state.userServers = state.userServers.filter((server) => server.name !== "tools");
    });
    const secrets = readFileSync(registry.paths.secretsFile, "utf8");
    expect(secrets).not.toContain("s3cret-env");
    expect(secrets).toContain("s3cret-header");
  });

  it("refuses a bad name, a bad URL and a name that is an ivoai server's alias, naming the field", () => {
    expect(() =>
      parseClientConfig('[mcp_servers.Bad]\ntransport = "stdio"\ncommand = "x"\n', "c.toml"),
    ).toThrow(/mcp_servers\.Bad: a server name/);
    expect(() =>
      parseClientConfig('[mcp_servers.a]\ntransport = "http"\nurl = "ftp://x"\n', "c.toml"),
    ).toThrow(/mcp_servers\.a/);
    const clash =
      '[servers.s1]\nalias = "work"\nurl = "https://w.example"\npurpose = "p"\n' +
      '[mcp_servers.work]\ntransport = "stdio"\ncommand = "x"\n';
    expect(() => parseClientConfig(clash, "c.toml")).toThrow(/has an ivoai server's alias/);
  });

  it("keeps unknown keys of an entry but not a field the user cleared", () => {
    const doc = parseClientConfig(
      '[mcp_servers.a]\ntransport = "stdio"\ncommand = "x"\ntools = ["echo"]\nnote = "mine"\n',
      "c.toml",
    );
    const [server] = doc.userServers;
    if (!server) throw new Error("no server parsed");
    const again = parseClientConfig(renderClientConfig(doc, [], [{ ...server, tools: undefined }]), "c.toml");
    expect(again.userServers[0]?.tools).toBeUndefined();
    expect((again.raw.mcp_servers as Record<string, Record<string, unknown>>).a?.note).toBe("mine");
  });

  it("names tools with the prefix and applies the allow-list", () => {
    expect(exposedToolName({ prefix: "gh" }, "search")).toBe("gh_search");
    expect(exposedToolName({}, "search")).toBe("search");
    expect(toolAllowed({ tools: ["a"] }, "b")).toBe(false);
    expect(toolAllowed({}, "b")).toBe(true);
  });
});
