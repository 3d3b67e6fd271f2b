// The ivoai-memory-context skill, offered to web assistants through skills/list, skills/get (the skills extension,
// SEP-2640) and resources/read; its text is protocol/skill-bundle.ts, as in the repository's skills/ directory.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { SKILL_DESCRIPTION, SKILL_DIGEST, SKILL_MD, SKILL_NAME } from "../../protocol/skill-bundle.js";

export const SKILL_URI = `skill://${SKILL_NAME}/SKILL.md`;

/** The capability key of the skills extension (SEP-2640), under `capabilities.extensions`, as clients look it up. */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

/**
 * What /mcp declares for skills: the SEP-2640 extension, and the earlier `experimental.skills` key kept for
 * clients that still look there.
 */
export const SKILLS_CAPABILITIES = {
  extensions: { [SKILLS_EXTENSION]: {} },
  experimental: { skills: {} },
};

/**
 * The skill's entry (SEP-2640: uri, frontmatter as in SKILL.md, the complete file manifest with digests and
 * sizes), with the fields of the earlier experimental shape (name, description, digest, mimeType) beside it.
 */
const skillEntry = {
  uri: SKILL_URI,
  frontmatter: { name: SKILL_NAME, description: SKILL_DESCRIPTION },
  resources: [
    { uri: SKILL_URI, digest: SKILL_DIGEST, size: Buffer.byteLength(SKILL_MD), mimeType: "text/markdown" },
  ],
  name: SKILL_NAME,
  description: SKILL_DESCRIPTION,
  digest: SKILL_DIGEST,
  mimeType: "text/markdown",
};

/** Registers the skill as a resource and answers the skills extension methods (skills/get by uri or by name). */
export function registerSkills(server: McpServer): void {
  server.registerResource(
    SKILL_NAME,
    SKILL_URI,
    {
      title: "ivoai memory and context",
      description: SKILL_DESCRIPTION,
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
    async () => ({ skills: [skillEntry] }),
  );
  server.server.setRequestHandler(
    z.object({
      method: z.literal("skills/get"),
      params: z.object({ uri: z.string().optional(), name: z.string().optional() }).passthrough(),
    }),
    async ({ params }) => {
      if (params.uri !== SKILL_URI && (params.uri !== undefined || params.name !== SKILL_NAME)) {
        const asked = (params.uri ?? params.name ?? "").slice(0, 200);
        throw new McpError(ErrorCode.InvalidParams, `unknown skill ${JSON.stringify(asked)}`);
      }
      return { skill: { ...skillEntry, content: SKILL_MD } };
    },
  );
}
