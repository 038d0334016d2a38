import { z } from 'zod';
import { keyAliasesOf } from './key-aliases.js';
import { ActorSchema } from './actor-schema.js';
import { ServerConfigSchema } from './server-schema.js';
import { SkillSchema } from './skill-schema.js';
import { ToolResourceSchema } from './tool-schema.js';

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
  // Old key spellings are still read (with a warning): list them as deprecated, so an editor
  // flags them as such rather than as unknown fields.
  const properties = schema['properties'] as Record<string, Record<string, unknown>> | undefined;
  for (const [oldKey, newKey] of Object.entries(keyAliasesOf(CONFIG_FILE_SCHEMAS[kind]) ?? {})) {
    const current = properties?.[newKey];
    if (properties === undefined || current === undefined) continue;
    properties[oldKey] = {
      $ref: `#/properties/${newKey}`,
      deprecated: true,
      description: `Deprecated spelling of \`${newKey}\`; rename the key to ${newKey}.`,
    };
  }
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
