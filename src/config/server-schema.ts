/** Server configs: stdio and remote transports, timeouts, restart policy, OAuth, file shapes. */
import { z } from 'zod';
import { NetworkSettingSchema } from './network-schema.js';
import { ToolOverridesSchema } from './tool-schema.js';
import {
  SERVER_RESTART_DEFAULTS,
  SERVER_TIMEOUT_DEFAULTS,
  type ServerRestartPolicy,
  type ServerTimeouts,
} from './server-defaults.js';

/** Timeouts of one server; the defaults are the only ones (`server-defaults.ts`, read by the server code). */
export const ServerTimeoutsSchema = z.strictObject({
  startupMs: z
    .number()
    .int()
    .positive()
    .default(SERVER_TIMEOUT_DEFAULTS.startupMs)
    .describe('Spawn/connect + initialize + first tools/list.'),
  callMs: z
    .number()
    .int()
    .positive()
    .default(SERVER_TIMEOUT_DEFAULTS.callMs)
    .describe('Per tool call; restarted by progress only with resetOnProgress.'),
  maxCallMs: z
    .number()
    .int()
    .positive()
    .default(SERVER_TIMEOUT_DEFAULTS.maxCallMs)
    .describe('Per tool call, even while progress arrives.'),
  resetOnProgress: z
    .boolean()
    .default(SERVER_TIMEOUT_DEFAULTS.resetOnProgress)
    .describe(
      'Each MCP progress notification restarts callMs (up to maxCallMs); asks every call for progress.',
    ),
  pingMs: z
    .number()
    .int()
    .positive()
    .default(SERVER_TIMEOUT_DEFAULTS.pingMs)
    .describe('Health ping timeout.'),
  healthCheckIntervalMs: z
    .number()
    .int()
    .nonnegative()
    .default(SERVER_TIMEOUT_DEFAULTS.healthCheckIntervalMs)
    .describe(
      'Ping the server this often (ms) while it is idle and restart it when the ping times out; 0 turns periodic pings off.',
    ),
  shutdownMs: z
    .number()
    .int()
    .positive()
    .default(SERVER_TIMEOUT_DEFAULTS.shutdownMs)
    .describe('Each wait in stdin-close → SIGTERM → SIGKILL.'),
});
export type { ServerRestartPolicy, ServerTimeouts } from './server-defaults.js';
export { resolveServerRestartPolicy, resolveServerTimeouts } from './server-defaults.js';

/** Restart policy of one server; the defaults are the only ones (`server-defaults.ts`). */
export const ServerRestartPolicySchema = z.strictObject({
  enabled: z.boolean().default(SERVER_RESTART_DEFAULTS.enabled),
  maxAttempts: z.number().int().min(0).default(SERVER_RESTART_DEFAULTS.maxAttempts),
  initialDelayMs: z.number().int().min(0).default(SERVER_RESTART_DEFAULTS.initialDelayMs),
  maxDelayMs: z.number().int().min(0).default(SERVER_RESTART_DEFAULTS.maxDelayMs),
});
// The schemas parse to exactly the plain types the server code reads.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _timeoutsMatch: Same<z.infer<typeof ServerTimeoutsSchema>, ServerTimeouts> = true;
const _restartMatch: Same<z.infer<typeof ServerRestartPolicySchema>, ServerRestartPolicy> = true;
void _timeoutsMatch;
void _restartMatch;

/** Largest tool-call arguments (JSON bytes) sent to a server without `maxArgumentBytes`: 8 MB. */
export const DEFAULT_MAX_ARGUMENT_BYTES = 8 * 1024 * 1024;

/** The MCP revisions a server config may pin; `auto` negotiates per server. */
export const MCP_PROTOCOL_CHOICES = ['auto', '2026-07-28', '2025-11-25'] as const;
export type McpProtocolChoice = (typeof MCP_PROTOCOL_CHOICES)[number];

const serverCommon = {
  name: z
    .string()
    .regex(/^[a-zA-Z0-9_-]{1,48}$/)
    .optional()
    .describe('Server name; defaults to the file name or map key.'),
  // Partial so a config built in code may leave fields out (the server fills them with
  // resolveServerTimeouts); parsing a file still fills every default.
  timeouts: ServerTimeoutsSchema.partial().optional().describe('Timeouts for this server.'),
  restart: ServerRestartPolicySchema.partial()
    .optional()
    .describe('Restart after a crash, with bounded exponential backoff.'),
  protocol: z
    .enum(MCP_PROTOCOL_CHOICES)
    .optional()
    .describe(
      'MCP revision: `auto` (default) probes `server/discover` (2026-07-28, stateless) and falls back to `initialize` (2025-11-25); a revision pins it and fails with a clear error when the server does not speak it.',
    ),
  trusted: z.boolean().default(false).describe('Trust this server’s annotations (readOnlyHint).'),
  trustedTools: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'Tools whose annotations were reviewed (`agents tool trust`), by tool name → definition fingerprint; trusted only while the definition is unchanged.',
    ),
  overrides: ToolOverridesSchema.optional().describe('Per-tool overrides keyed by tool name.'),
  prefixToolNames: z
    .boolean()
    .optional()
    .describe('Always prefix tool names with the server name.'),
  maxArgumentBytes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      `Largest tool-call arguments (JSON bytes) sent to this server; a bigger call fails with an error result and is not sent. Default ${DEFAULT_MAX_ARGUMENT_BYTES} (8 MB).`,
    ),
  network: NetworkSettingSchema.optional().describe(
    "This server's network, instead of the actor's `sandbox.network`: true, false, or `{ allow, deny }` host lists.",
  ),
  rewritePaths: z
    .boolean()
    .optional()
    .describe(
      'Map path arguments into the sandbox (and refuse escapes) for this server. Default true for stdio servers; false for remote (streamable-http, sse) servers, which do not run on this disk.',
    ),
};

/**
 * Per-server exceptions to OS confinement: folders or files outside the sandbox a confined server
 * may write (`writable`) or read (`readOnly`), such as its own data file. Absolute paths (`~/`
 * means the home folder); never the project, the workspace or the state folder.
 */
export const ServerSandboxExceptionsSchema = z
  .strictObject({
    writable: z
      .array(z.string().min(1))
      .optional()
      .describe('Absolute paths a confined server may write (e.g. its own data folder).'),
    readOnly: z
      .array(z.string().min(1))
      .optional()
      .describe('Absolute paths a confined server may read although they are hidden.'),
  })
  .describe('Exceptions to OS confinement for this server.');
export type ServerSandboxExceptions = z.infer<typeof ServerSandboxExceptionsSchema>;

export const StdioServerConfigSchema = z
  .strictObject({
    transport: z.literal('stdio'),
    command: z
      .string()
      .min(1)
      .describe('Executable; spawned with an argument array, never a shell.'),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).optional().describe('Extra environment variables.'),
    cwd: z.string().optional().describe('Working directory (defaults to the sandbox root).'),
    allowShell: z
      .boolean()
      .optional()
      .describe(
        'Allow a command that runs a code string (`sh -c`, `node -e`, `npx -c`). Off by default.',
      ),
    sandbox: ServerSandboxExceptionsSchema.optional().describe(
      'Explicit exceptions to OS confinement for this server (its own data outside the project); `agents doctor` lists them.',
    ),
    ...serverCommon,
  })
  .describe('A server spawned as a child process speaking MCP over stdio.');

/** A client ID metadata document URL: https, and not the bare origin (SEP-991). */
function isHttpsUrlWithPath(value: string): boolean {
  const url = new URL(value);
  return url.protocol === 'https:' && url.pathname !== '/';
}

/** OAuth 2.1 settings of a remote server; secrets as `${VAR}` references, resolved at start. */
export const OAuthSettingsSchema = z
  .strictObject({
    grant: z
      .enum(['authorization_code', 'client_credentials'])
      .default('authorization_code')
      .describe(
        '`authorization_code` (a person logs in once with `agents server login NAME`; tokens are refreshed) or `client_credentials` (unattended: clientId + clientSecret or privateKey).',
      ),
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A pre-registered client id. Without it the client registers itself (client ID metadata document or dynamic client registration).',
      ),
    clientSecret: z
      .string()
      .min(1)
      .optional()
      .describe('The client secret of a pre-registered client; write it as `${VAR}`.'),
    privateKey: z
      .string()
      .min(1)
      .optional()
      .describe(
        'PEM private key for `private_key_jwt` client authentication (client_credentials); write it as `${VAR}`.',
      ),
    algorithm: z
      .string()
      .min(1)
      .optional()
      .describe('Signing algorithm of `privateKey` (default RS256).'),
    scope: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Scopes to ask for when the server names none (its WWW-Authenticate and metadata win).',
      ),
    issuer: z
      .url()
      .optional()
      .describe(
        'The authorization server a pre-registered client belongs to; its credentials go to no other.',
      ),
    clientMetadataUrl: z
      .url()
      .refine(isHttpsUrlWithPath, {
        message:
          'must be an https URL with a path (the client id is that URL; `agents server login NAME --client-metadata` prints the document to serve there)',
      })
      .optional()
      .describe(
        'HTTPS URL of this client’s metadata document, used as client id instead of dynamic registration where the authorization server supports it (`agents server login NAME --client-metadata` prints the document).',
      ),
    redirectPort: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe(
        'Fixed port of the login redirect (http://127.0.0.1:PORT/callback) for clients registered with one redirect URI; default any free port.',
      ),
  })
  .describe('OAuth for this server; tokens live in the per-user state folder, never here.');
export type OAuthSettings = z.infer<typeof OAuthSettingsSchema>;

export const HttpServerConfigSchema = z
  .strictObject({
    transport: z
      .enum(['streamable-http', 'sse', 'auto'])
      .describe(
        '`streamable-http`, legacy `sse`, or `auto`: streamable HTTP first, then SSE (a `url` without a type).',
      ),
    url: z.url().describe('Server endpoint URL; `${VAR}` references are resolved at start.'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe('HTTP headers; write secrets as `${VAR}` references.'),
    oauth: z
      .union([z.literal(false), OAuthSettingsSchema])
      .optional()
      .describe(
        'OAuth settings, or false to never answer a 401 with OAuth. Default: OAuth with self-registration when the server asks for it and no Authorization header is set.',
      ),
    ...serverCommon,
  })
  .describe('A remote server over streamable HTTP or legacy SSE.');

/** The transports an entry's `type` (Claude Desktop, Cursor, VS Code) or `transport` may name. */
const TRANSPORT_ALIASES: Readonly<Record<string, string>> = {
  stdio: 'stdio',
  http: 'streamable-http',
  'streamable-http': 'streamable-http',
  streamableHttp: 'streamable-http',
  streamable_http: 'streamable-http',
  sse: 'sse',
  auto: 'auto',
};

/**
 * Accepts the server shapes people already have (Claude Desktop, Cursor and VS Code `mcp.json`
 * entries, `@langchain/mcp-adapters` `mcpServers`) where they are unambiguous: `type` or a
 * langchain `transport: http` names the transport, or it follows from `command` / `url`. A
 * `url` without a type tries streamable HTTP, then SSE (the SDK's advice). Shapes that say
 * nothing get a "missing" message instead of zod's discriminator error.
 */
function normalizeServerShape(value: unknown, context: z.RefinementCtx): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const input = value as Record<string, unknown>;
  const { type, ...rest } = input;
  const named = input['transport'] ?? type;
  if (typeof named === 'string') {
    // langchain's `transport: http` means streamable HTTP with automatic SSE fallback.
    const langchainHttp = input['transport'] === 'http';
    if (TRANSPORT_ALIASES[named] === undefined) {
      context.addIssue({
        code: 'custom',
        message: `unknown transport "${named}"; use stdio, streamable-http (type: http), sse or auto`,
        path: [input['transport'] === undefined ? 'type' : 'transport'],
      });
      return z.NEVER;
    }
    const transport = langchainHttp
      ? rest['automaticSSEFallback'] === false
        ? 'streamable-http'
        : 'auto'
      : (TRANSPORT_ALIASES[named] ?? named);
    const { automaticSSEFallback: _fallback, ...withoutFallback } = rest;
    return { ...(langchainHttp ? withoutFallback : rest), transport };
  }
  if (named !== undefined) return value;
  const hasCommand = 'command' in input;
  const hasUrl = 'url' in input;
  if (hasCommand && hasUrl) {
    context.addIssue({
      code: 'custom',
      message:
        'both "command" and "url" are given; keep one, or add transport: stdio | streamable-http | sse',
      path: ['transport'],
    });
    return z.NEVER;
  }
  if (hasCommand) return { ...rest, transport: 'stdio' };
  if (hasUrl) return { ...rest, transport: 'auto' };
  context.addIssue({
    code: 'custom',
    message:
      'missing "command" (a server started as a process) or "url" (a remote server); transport is missing too',
    path: [],
  });
  return z.NEVER;
}

const CanonicalServerConfigSchema = z.discriminatedUnion('transport', [
  StdioServerConfigSchema,
  HttpServerConfigSchema,
]);

/**
 * A server config: stdio, or remote over streamable HTTP / SSE. Files may use the common shapes
 * (see `normalizeServerShape`); its TypeScript input type is the canonical union, so code
 * writes the canonical form.
 */
export const ServerConfigSchema = z.preprocess(
  normalizeServerShape,
  CanonicalServerConfigSchema,
) as unknown as typeof CanonicalServerConfigSchema;
export type ServerConfigInput = z.input<typeof ServerConfigSchema>;
export type ServerConfig = z.infer<typeof ServerConfigSchema>;
export type StdioServerConfig = z.infer<typeof StdioServerConfigSchema>;
export type HttpServerConfig = z.infer<typeof HttpServerConfigSchema>;
/** A server config with its name resolved. */
export type NamedServerConfig = ServerConfig & { name: string };
