/**
 * The `@agents/langgraph-mcp/config` entry: the zod schemas of servers, skills, actors and tool
 * overrides, and their JSON Schemas (editor completion). Loading YAML is on the root.
 */
export type { Actor } from '../config/actor-schema.js';
export type {
  HttpServerConfig,
  NamedServerConfig,
  ServerConfig,
  ServerConfigInput,
  StdioServerConfig,
} from '../config/server-schema.js';
export type { Skill } from '../config/skill-schema.js';
export type { ToolOverride, ToolOverrides, ToolResource } from '../config/tool-schema.js';
export { ActorSchema } from '../config/actor-schema.js';
export { ServerConfigSchema } from '../config/server-schema.js';
export { SkillSchema } from '../config/skill-schema.js';
export { ToolOverrideSchema, ToolResourceSchema } from '../config/tool-schema.js';
export type { ConfigProblem, ParseYamlOptions } from '../config/load.js';
export { loadYamlFile, parseYaml } from '../config/load.js';
export { configJsonSchemas } from '../config/json-schema.js';
