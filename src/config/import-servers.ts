import { homedir } from 'node:os';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import {
  rewriteVariables,
  secretArguments,
  secretQuery,
  secretValues,
  type SecretSink,
} from './import-secrets.js';
import { stripJsonComments } from './jsonc.js';
import { ServerConfigSchema } from './server-schema.js';
import type { ServerConfigInput } from './server-schema.js';

/** The apps whose MCP config `agents server import --from` knows where to find. */
export type ImportSource = 'claude' | 'cursor' | 'vscode';

/** One server translated from another app's config, ready to write as `servers/NAME.yaml`. */
export interface ImportedServer {
  /** The name it gets here (the entry's key, made file-name safe). */
  name: string;
  /** The key in the source file. */
  sourceKey: string;
  /** The record to write; secrets replaced by `${VAR}` references. */
  config: ServerConfigInput;
  /** Variables the record refers to, which the person must export before the server starts. */
  variables: string[];
  /** What was changed or left out, one line each. */
  notes: string[];
}

/** What {@link importServers} found in one file. */
export interface ImportResult {
  servers: ImportedServer[];
  /** Entries that could not be used (disabled, or neither a command nor a URL). */
  skipped: { sourceKey: string; reason: string }[];
  /**
   * The secret values taken out of the source, by the variable that replaces each: for the
   * `export` lines shown on a terminal. Never written to a file or printed as JSON.
   */
  secrets: Record<string, string>;
}

/**
 * Where each app keeps its MCP servers, most specific first: project files (relative to `cwd`),
 * then the per-user file.
 */
export function importSourcePaths(
  source: ImportSource,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string[] {
  const home = env['HOME'] ?? homedir();
  switch (source) {
    case 'claude':
      return platform === 'darwin'
        ? [join(home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json')]
        : platform === 'win32'
          ? [
              join(
                env['APPDATA'] ?? join(home, 'AppData', 'Roaming'),
                'Claude',
                'claude_desktop_config.json',
              ),
            ]
          : [
              join(
                env['XDG_CONFIG_HOME'] ?? join(home, '.config'),
                'Claude',
                'claude_desktop_config.json',
              ),
            ];
    case 'cursor':
      return [join(cwd, '.cursor', 'mcp.json'), join(home, '.cursor', 'mcp.json')];
    case 'vscode':
      return [join(cwd, '.vscode', 'mcp.json')];
  }
}

/** Fields of other apps' entries that have no meaning here; dropped with a note. */
const IGNORED_FIELDS: Readonly<Record<string, string>> = {
  envFile: 'envFile is not read; export its variables instead',
  autoApprove: 'autoApprove is not imported; approvals come from the actor policy',
  alwaysAllow: 'alwaysAllow is not imported; approvals come from the actor policy',
  description: 'description dropped',
  timeout: 'timeout dropped; set timeouts.callMs',
  defaultToolTimeout: 'defaultToolTimeout dropped; set timeouts.callMs',
  restart: 'restart dropped (different shape here; the default restarts with backoff)',
  reconnect: 'reconnect dropped (remote sessions are re-initialized on 404)',
  stderr: 'stderr dropped (server stderr goes to the log)',
  encoding: 'encoding dropped',
  outputHandling: 'outputHandling dropped; see the actor output budget',
  useNodeEventSource: 'useNodeEventSource dropped',
  gallery: 'gallery dropped',
  version: 'version dropped',
  dev: 'dev dropped',
};

/**
 * Reads another app's MCP config text (JSON, or VS Code's JSON with comments) and translates its
 * servers: Claude Desktop / Cursor `mcpServers`, VS Code `servers` (also under `mcp` in
 * settings), `@langchain/mcp-adapters` `mcpServers`, or a bare map of entries. `${env:X}` and
 * `${input:X}` become `${X}`; a literal value of a secret-looking env key, header or argument
 * becomes a `${VAR}` reference, so no secret is copied into `.agents/`.
 * Throws `CONFIG_INVALID` naming the file when it is not such a config.
 */
export function importServers(text: string, file: string): ImportResult {
  let document: unknown;
  try {
    document = JSON.parse(stripJsonComments(text));
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `${file} is not JSON (${(error as Error).message}); give an mcp.json or claude_desktop_config.json.`,
      { cause: error, details: { file, problems: [] } },
    );
  }
  const entries = serverMap(document);
  if (entries === undefined) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `${file} has no MCP servers: missing "mcpServers" (Claude Desktop, Cursor, langchain) or "servers" (VS Code).`,
      { details: { file, problems: [{ path: 'mcpServers', message: 'missing' }] } },
    );
  }
  const secrets = new Map<string, string>();
  const result: ImportResult = { servers: [], skipped: [], secrets: {} };
  const taken = new Set<string>();
  for (const [key, value] of Object.entries(entries)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      result.skipped.push({ sourceKey: key, reason: 'not an object' });
      continue;
    }
    const entry = value as Record<string, unknown>;
    if (entry['disabled'] === true) {
      result.skipped.push({ sourceKey: key, reason: 'disabled in the source' });
      continue;
    }
    let name = safeName(key);
    for (let n = 2; taken.has(name); n++) name = `${safeName(key).slice(0, 45)}-${n}`;
    const translated = translateEntry(name, entry, secrets);
    const parsed = ServerConfigSchema.safeParse(translated.config);
    if (!parsed.success) {
      result.skipped.push({
        sourceKey: key,
        reason: parsed.error.issues
          .map((issue) => `${issue.path.join('.') || '(entry)'}: ${issue.message}`)
          .join('; '),
      });
      continue;
    }
    taken.add(name);
    // Written in this library's own form: `transport` instead of `type` and langchain's flags.
    const {
      type: _type,
      transport: _transport,
      automaticSSEFallback: _fallback,
      ...rest
    } = translated.config;
    const config = { transport: parsed.data.transport, ...rest } as ServerConfigInput;
    result.servers.push({ name, sourceKey: key, ...translated, config });
  }
  result.secrets = Object.fromEntries(secrets);
  return result;
}

function serverMap(document: unknown): Record<string, unknown> | undefined {
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    return undefined;
  const root = document as Record<string, unknown>;
  for (const candidate of [
    root['mcpServers'],
    root['servers'],
    (root['mcp'] as Record<string, unknown> | undefined)?.['servers'],
  ]) {
    if (typeof candidate === 'object' && candidate !== null && !Array.isArray(candidate)) {
      return candidate as Record<string, unknown>;
    }
  }
  // A bare map: every value is an entry with a command or a url.
  const values = Object.values(root);
  if (
    values.length > 0 &&
    values.every(
      (value) =>
        typeof value === 'object' && value !== null && ('command' in value || 'url' in value),
    )
  ) {
    return root;
  }
  return undefined;
}

function translateEntry(
  name: string,
  entry: Record<string, unknown>,
  values: Map<string, string>,
): { config: Record<string, unknown>; variables: string[]; notes: string[] } {
  const notes: string[] = [];
  const variables = new Set<string>();
  const sink: SecretSink = { variables, notes, values };
  const prefix = name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  const config: Record<string, unknown> = {};
  const rewrite = (text: string) => rewriteVariables(text, variables, notes);

  for (const [field, value] of Object.entries(entry)) {
    if (field in IGNORED_FIELDS) {
      notes.push(IGNORED_FIELDS[field] as string);
      continue;
    }
    switch (field) {
      case 'type':
      case 'transport':
      case 'automaticSSEFallback':
      case 'command':
        config[field] = typeof value === 'string' ? rewrite(value) : value;
        break;
      case 'cwd':
        config['cwd'] = typeof value === 'string' ? rewrite(value) : value;
        break;
      case 'args':
        config['args'] = Array.isArray(value)
          ? secretArguments(
              value.map((arg) => (typeof arg === 'string' ? rewrite(arg) : String(arg))),
              prefix,
              sink,
              typeof entry['command'] === 'string' ? entry['command'] : '',
            )
          : value;
        break;
      case 'env':
        config['env'] = secretValues(value, (key) => key, sink, 'env', rewrite);
        break;
      case 'headers':
        config['headers'] = secretValues(
          value,
          (key) => `${prefix}_${key.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`,
          sink,
          'headers',
          rewrite,
        );
        break;
      case 'url':
        config['url'] =
          typeof value === 'string' ? secretQuery(rewrite(value), prefix, sink) : value;
        break;
      default:
        notes.push(`${field} dropped (not a setting here)`);
    }
  }
  return { config, variables: [...variables], notes };
}
function safeName(key: string): string {
  const name = key
    .replace(/[^a-zA-Z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return name === '' ? 'server' : name;
}
