/** The skill schema: a named bundle of tools from every source. */
import { z } from 'zod';
import {
  SKILL_KEY_ALIASES,
  bothSpellingsMessage,
  registerKeyAliases,
  renameAliasedKeys,
} from './key-aliases.js';
import { ServerConfigSchema } from './server-schema.js';
import { ToolOverridesSchema } from './tool-schema.js';

/** A skill as its canonical keys spell it (see {@link SkillSchema}). */
const CanonicalSkillSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-zA-Z0-9_-]{1,64}$/)
      .optional(),
    description: z.string().default(''),
    tools: z
      .array(z.string())
      .default([])
      .describe(
        'Built-in tool names (`read_file`), tool resource ids, or `custom:./module.js#export`.',
      ),
    mcpServers: z
      .array(z.union([z.string(), ServerConfigSchema.and(z.object({ name: z.string() }))]))
      .default([])
      .describe('Server record names, or inline server configs with a name.'),
    agentSkills: z
      .array(z.string())
      .default([])
      .describe(
        'Agent Skill folders (with a SKILL.md): a bare name is a folder in `.agents/skills/` ' +
          '(`release-notes` → `.agents/skills/release-notes/`); a path is relative to the project.',
      ),
    overrides: ToolOverridesSchema.default({}).describe('Per-tool overrides applied at inclusion.'),
  })
  .describe('A skill.');

/**
 * A skill: a named bundle of tools from every source. The deprecated snake_case keys
 * (`mcp_servers`, `agent_skills`; see `key-aliases.ts`) are accepted and renamed; both spellings
 * of one key are an error. YAML files get a deprecation warning with the line from `parseYaml`.
 */
export const SkillSchema = z.preprocess((input, context) => {
  const { value, conflicts } = renameAliasedKeys(input, SKILL_KEY_ALIASES);
  if (conflicts.length === 0) return value;
  const rest = { ...(value as Record<string, unknown>) };
  for (const conflict of conflicts) {
    delete rest[conflict.oldKey];
    context.addIssue({
      code: 'custom',
      message: bothSpellingsMessage(conflict),
      path: [conflict.oldKey],
    });
  }
  return rest;
}, CanonicalSkillSchema) as unknown as typeof CanonicalSkillSchema;
registerKeyAliases(SkillSchema, SKILL_KEY_ALIASES);
export type Skill = z.infer<typeof SkillSchema>;
