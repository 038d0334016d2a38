/**
 * The config schemas, one module per concern (tools, servers, skills, actors); re-exported
 * here so importers keep one place to import them from.
 */
export {
  ToolOverrideSchema,
  ToolOverridesSchema,
  ToolResourceSchema,
  type ToolOverride,
  type ToolOverrides,
  type ToolResource,
} from './tool-schema.js';
export {
  MCP_PROTOCOL_CHOICES,
  type McpProtocolChoice,
  DEFAULT_MAX_ARGUMENT_BYTES,
  HttpServerConfigSchema,
  OAuthSettingsSchema,
  ServerConfigSchema,
  ServerRestartPolicySchema,
  ServerTimeoutsSchema,
  StdioServerConfigSchema,
  resolveServerRestartPolicy,
  resolveServerTimeouts,
  type HttpServerConfig,
  type NamedServerConfig,
  type OAuthSettings,
  type ServerConfig,
  type ServerConfigInput,
  type ServerRestartPolicy,
  type ServerTimeouts,
  type StdioServerConfig,
} from './server-schema.js';
export { SkillSchema, type Skill } from './skill-schema.js';
export {
  ActorSchema,
  CheckpointerSettingsSchema,
  DEFAULT_MAX_TURNS,
  OutputBudgetLimitsSchema,
  OutputBudgetSettingsSchema,
  SandboxSettingsSchema,
  SharedSnapshotsSettingsSchema,
  type Actor,
  type OutputBudgetLimitsSettings,
  type OutputBudgetSettings,
  type SharedSnapshotsSettings,
} from './actor-schema.js';
