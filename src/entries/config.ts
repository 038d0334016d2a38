/**
 * The `@agents/langgraph-mcp/config` entry: the zod schemas of servers, skills, actors and tool
 * overrides, and their JSON Schemas (editor completion). Loading YAML is on the root.
 */
export type {
  Actor,
  HttpServerConfig,
  NamedServerConfig,
  ServerConfig,
  ServerConfigInput,
  Skill,
  StdioServerConfig,
  ToolOverride,
  ToolOverrides,
  ToolResource,
} from '../config/schemas.js';
export {
  ActorSchema,
  ServerConfigSchema,
  SkillSchema,
  ToolOverrideSchema,
  ToolResourceSchema,
} from '../config/schemas.js';
export type { ConfigProblem, ParseYamlOptions } from '../config/load.js';
export { loadYamlFile, parseYaml } from '../config/load.js';
export { configJsonSchemas } from '../config/json-schema.js';
