// The ivoai-memory-context skill, offered to web assistants through skills/list, skills/get and resources/read.
import { createHash } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { knowledgePolicy } from "../../protocol/prompts.js";
import { TOOL_NAMES } from "../../protocol/tools.js";

export const SKILL_NAME = "ivoai-memory-context";
export const SKILL_URI = `skill://${SKILL_NAME}/SKILL.md`;

export const SKILL_MD = `---
name: ${SKILL_NAME}
description: Use the organisation's ivoai memory and context before the web.
---

# ivoai memory and context

${knowledgePolicy(new Set(TOOL_NAMES))}
`;

export const SKILL_DIGEST = `sha256:${createHash("sha256").update(SKILL_MD).digest("hex")}`;

const skillDescriptor = {
  name: SKILL_NAME,
  description: "Use the organisation's ivoai memory and context before the web.",
  uri: SKILL_URI,
  digest: SKILL_DIGEST,
  mimeType: "text/markdown",
};

/** Registers the skill as a resource and answers the skills extension methods. */
export function registerSkills(server: McpServer): void {
  server.registerResource(
    SKILL_NAME,
    SKILL_URI,
    {
      title: "ivoai memory and context",
      description: skillDescriptor.description,
      mimeType: "text/markdown",
      _meta: { digest: SKILL_DIGEST },
    },
    async (uri) => ({
      contents: [
        { uri: uri.href, mimeType: "text/markdown", text: SKILL_MD, _meta: { digest: SKILL_DIGEST } },
      ],
    }),
  );
  server.server.setRequestHandler(
    z.object({ method: z.literal("skills/list"), params: z.object({}).passthrough().optional() }),
    async () => ({
      skills: [skillDescriptor],
    }),
  );
  server.server.setRequestHandler(
    z.object({ method: z.literal("skills/get"), params: z.object({ name: z.string() }).passthrough() }),
    async (request) => {
      if (request.params.name !== SKILL_NAME) throw new Error(`unknown skill ${request.params.name}`);
      return { skill: { ...skillDescriptor, content: SKILL_MD } };
    },
  );
}
