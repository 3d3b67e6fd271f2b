// What skills/get serves, asked of a real MCP server and client over the SDK's in-memory pair: the tests of the
// skill bundle and the release compare their files with it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { registerSkills, SKILL_URI } from "./skills.js";

const servedSchema = z.object({
  skill: z
    .object({
      digest: z.string(),
      content: z.string(),
      resources: z.array(z.object({ uri: z.string(), digest: z.string() }).passthrough()),
    })
    .passthrough(),
});

/** The skill entry skills/get answers for the skill's URI. */
export async function servedSkill(): Promise<z.infer<typeof servedSchema>["skill"]> {
  const server = new McpServer({ name: "skills-test", version: "0" }, { capabilities: { resources: {} } });
  registerSkills(server);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "skills-test", version: "0" });
  await client.connect(clientSide);
  try {
    return (await client.request({ method: "skills/get", params: { uri: SKILL_URI } }, servedSchema)).skill;
  } finally {
    await client.close();
  }
}
