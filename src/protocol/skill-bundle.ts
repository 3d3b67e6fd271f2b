// The ivoai-memory-context skill's files, written from the knowledge policy (prompts.ts): the one source of the
// repository's skills/ directory (scripts/skills.mjs), the release's zip and the Web MCP skill (skills/get).
import { createHash } from "node:crypto";
import { knowledgePolicy } from "./prompts.js";
import { TOOL_NAMES } from "./tools.js";

/** The skill's name: its folder under skills/, its skill:// URI and the zip's top folder. */
export const SKILL_NAME = "ivoai-memory-context";

/** The skill's one-line description, as in SKILL.md's frontmatter. */
export const SKILL_DESCRIPTION = "Use the organisation's ivoai memory and context before the web.";

/** One file of the skill, by its path inside the skill's folder (POSIX separators). */
export interface SkillFile {
  path: string;
  content: string;
}

/** SKILL.md: the frontmatter and the knowledge policy with every tool offered. */
export const SKILL_MD = `---
name: ${SKILL_NAME}
description: ${SKILL_DESCRIPTION}
---

# ivoai memory and context

${knowledgePolicy(new Set(TOOL_NAMES))}
`;

/** Every file of the skill, sorted by path (SKILL.md first as the only one today). */
export const SKILL_FILES: readonly SkillFile[] = [{ path: "SKILL.md", content: SKILL_MD }];

/** `sha256:<hex>` of a file's UTF-8 bytes, as skills/get and resources/read announce it. */
export function skillDigest(content: string): string {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}

/** The digest of SKILL.md, the skill's own digest in skills/list and skills/get. */
export const SKILL_DIGEST = skillDigest(SKILL_MD);
