import { z } from 'zod';
import { ActorSchema, ServerConfigSchema, SkillSchema, ToolResourceSchema } from './schemas.js';

/** The kinds of files a workspace holds, each with its own schema. */
export type ConfigFileKind = 'server' | 'tool' | 'skill' | 'actor';

/** The zod schema of each workspace file kind. */
export const CONFIG_FILE_SCHEMAS = {
  server: ServerConfigSchema,
  tool: ToolResourceSchema,
  skill: SkillSchema,
  actor: ActorSchema,
} as const satisfies Record<ConfigFileKind, z.ZodType>;

/**
 * JSON Schema (draft 2020-12) for one file kind, generated from its zod schema, for editor
 * completion (`# yaml-language-server: $schema=...`). Describes the input side: fields with
 * defaults are optional.
 */
export function toConfigJsonSchema(kind: ConfigFileKind): Record<string, unknown> {
  const schema = z.toJSONSchema(CONFIG_FILE_SCHEMAS[kind], {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'any',
  });
  return {
    ...schema,
    $id: `https://agents.dev/schemas/${kind}.schema.json`,
    title: `agents ${kind} file`,
  };
}

/** JSON Schemas for every file kind, keyed by kind. */
export function configJsonSchemas(): Record<ConfigFileKind, Record<string, unknown>> {
  return {
    server: toConfigJsonSchema('server'),
    tool: toConfigJsonSchema('tool'),
    skill: toConfigJsonSchema('skill'),
    actor: toConfigJsonSchema('actor'),
  };
}
