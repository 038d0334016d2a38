import type { ToolAnnotations } from '@modelcontextprotocol/client';
import type { ToolOverride } from '../config/tool-schema.js';
import type { Capabilities, CapabilityVerdict } from '../core/tool-descriptor.js';

/**
 * Name words that mean the tool changes something (ADR-029 "Model Context Protocol (MCP)
 * Adoption": create, write, delete, update; plus the usual relatives).
 */
export const WRITE_WORDS: ReadonlySet<string> = new Set([
  'create',
  'write',
  'delete',
  'update',
  'edit',
  'move',
  'remove',
  'set',
  'put',
  'patch',
  'insert',
  'rename',
  'upload',
  'download',
  'add',
  'append',
  'apply',
  'save',
  'store',
  'replace',
  'modify',
  'overwrite',
  'upsert',
  'purge',
  'drop',
  'truncate',
  'destroy',
  'wipe',
  'erase',
  'clear',
  'reset',
  'kill',
  'terminate',
  'exec',
  'execute',
  'run',
  'send',
  'push',
  'commit',
  'merge',
  'install',
  'uninstall',
  'deploy',
  'publish',
  'sync',
  'copy',
  'mkdir',
  'rm',
  'mv',
  'cp',
  'chmod',
  'chown',
  'submit',
  'restore',
  'revert',
]);

/** Name words that mean the tool changes something irreversibly. */
export const DESTRUCTIVE_WORDS: ReadonlySet<string> = new Set([
  'delete',
  'remove',
  'purge',
  'drop',
  'truncate',
  'destroy',
  'wipe',
  'erase',
  'overwrite',
  'kill',
  'terminate',
  'rm',
  'reset',
  'clear',
  'uninstall',
]);

/** Name words that mean the tool only reads (the same ADR-029, plus the usual relatives). */
export const READ_WORDS: ReadonlySet<string> = new Set([
  'get',
  'list',
  'read',
  'search',
  'find',
  'fetch',
  'describe',
  'show',
  'query',
  'view',
  'inspect',
  'lookup',
  'stat',
  'count',
  'ls',
  'cat',
  'grep',
  'peek',
  'browse',
]);

const SIMPLE_NAME = /^[a-z0-9_-]*$/;
const UNDERSCORE = 0x5f;
const HYPHEN = 0x2d;
type HintKey = 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint';

/**
 * Splits a tool name into lower-case words on snake_case, kebab-case, dots, slashes, spaces and
 * camelCase boundaries: `listDirectory` → `list directory`, `HTTPGetter` → `http getter`.
 */
export function nameWords(name: string): string[] {
  // Most MCP names are lower snake/kebab case: one pass cutting at `_` and `-`, no regexes.
  if (SIMPLE_NAME.test(name)) {
    const words: string[] = [];
    let start = 0;
    for (let index = 0; index <= name.length; index++) {
      const code = index < name.length ? name.charCodeAt(index) : UNDERSCORE;
      if (code !== UNDERSCORE && code !== HYPHEN) continue;
      if (index > start) words.push(name.slice(start, index));
      start = index + 1;
    }
    return words;
  }
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^a-zA-Z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

/** What {@link inferCapabilities} looks at. The description is deliberately not an input. */
export interface CapabilityInput {
  /** The tool's name at its source (the MCP name). */
  name: string;
  /** MCP annotations as received: untrusted, and only real booleans count. */
  annotations?: ToolAnnotations | Record<string, unknown>;
  /** A config override; its capabilities win. */
  override?: Pick<ToolOverride, 'capabilities'>;
  /** Trust this server's annotations (lets `readOnlyHint: true` alone make a tool read-only). */
  trusted?: boolean;
  /** A reviewed verdict for a well-known server's tool (see `known-servers.ts`). */
  known?: { readOnly: true; reason: string };
}

function verdict(
  value: boolean,
  source: CapabilityVerdict['source'],
  reason: string,
): CapabilityVerdict {
  return { value, source, reason };
}

function booleanOrUndefined(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

function noteNonBoolean(disagreements: string[], key: HintKey, raw: unknown): void {
  if (raw !== undefined && typeof raw !== 'boolean') {
    disagreements.push(`annotation ${key}=${JSON.stringify(raw)} ignored: not a boolean`);
  }
}

/**
 * Decides whether a tool reads or writes, and whether it is destructive or open-world, with the
 * source and reason of every verdict.
 *
 * Precedence: config override > any write evidence (name word, `readOnlyHint: false`,
 * `destructiveHint: true`) > read evidence. Read needs positive
 * evidence: a read word in the name (with no write word), or `readOnlyHint: true` from a
 * trusted server. Annotations are untrusted hints: non-boolean values are ignored, and
 * `readOnlyHint: true` from an untrusted server on a name without a read word is ignored.
 * Every ignored or overruled hint is listed in `disagreements`. The default is `writes: true`,
 * `destructive: true`, `openWorld: true` (the MCP spec defaults).
 */
export function inferCapabilities(input: CapabilityInput): Capabilities {
  // The first word of each kind, in one pass (this runs for every listed tool).
  let writeWord: string | undefined;
  let readWord: string | undefined;
  let destructiveWord: string | undefined;
  for (const word of nameWords(input.name)) {
    if (writeWord === undefined && WRITE_WORDS.has(word)) writeWord = word;
    if (readWord === undefined && READ_WORDS.has(word)) readWord = word;
    if (destructiveWord === undefined && DESTRUCTIVE_WORDS.has(word)) destructiveWord = word;
  }
  // Each hint read once, by name (annotation objects come in many shapes).
  const annotations = (input.annotations ?? undefined) as
    { [key in HintKey]?: unknown } | undefined;
  const rawReadOnly = annotations?.readOnlyHint;
  const rawDestructive = annotations?.destructiveHint;
  const rawIdempotent = annotations?.idempotentHint;
  const rawOpenWorld = annotations?.openWorldHint;
  const readOnlyHint = booleanOrUndefined(rawReadOnly);
  const destructiveHint = booleanOrUndefined(rawDestructive);
  const openWorldHint = booleanOrUndefined(rawOpenWorld);
  const trusted = input.trusted === true;
  const overrides = input.override?.capabilities ?? {};
  const disagreements: string[] = [];

  noteNonBoolean(disagreements, 'readOnlyHint', rawReadOnly);
  noteNonBoolean(disagreements, 'destructiveHint', rawDestructive);
  noteNonBoolean(disagreements, 'idempotentHint', rawIdempotent);
  noteNonBoolean(disagreements, 'openWorldHint', rawOpenWorld);

  // readOnly / writes
  let readOnly: CapabilityVerdict;
  if (overrides.readOnly !== undefined || overrides.writes !== undefined) {
    const value = overrides.readOnly ?? !(overrides.writes ?? true);
    readOnly = verdict(
      value,
      'override',
      `config override sets ${overrides.readOnly !== undefined ? `readOnly=${overrides.readOnly}` : `writes=${String(overrides.writes)}`}`,
    );
  } else if (writeWord !== undefined) {
    readOnly = verdict(false, 'name-heuristic', `name word "${writeWord}"`);
    if (readOnlyHint === true) {
      disagreements.push(
        `annotation readOnlyHint=true ignored: name word "${writeWord}" says write`,
      );
    }
  } else if (readOnlyHint === true && destructiveHint === true) {
    readOnly = verdict(
      false,
      'annotation',
      'annotations contradict (readOnlyHint=true and destructiveHint=true)',
    );
    disagreements.push('annotation readOnlyHint=true ignored: destructiveHint=true contradicts it');
  } else if (readOnlyHint === false) {
    readOnly = verdict(false, 'annotation', 'annotation readOnlyHint=false');
    if (readWord !== undefined) {
      disagreements.push(
        `name word "${readWord}" says read but annotation readOnlyHint=false says write`,
      );
    }
  } else if (destructiveHint === true) {
    // Says it destroys things: write evidence, and a claim that only tightens is safe to honour
    // from any server.
    readOnly = verdict(false, 'annotation', 'annotation destructiveHint=true');
    if (readWord !== undefined) {
      disagreements.push(
        `name word "${readWord}" says read but annotation destructiveHint=true says write`,
      );
    }
  } else if (input.known?.readOnly === true) {
    // Below every kind of write evidence: a reviewed table never overrules a hint that tightens.
    readOnly = verdict(true, 'known-server', input.known.reason);
  } else if (readWord !== undefined) {
    readOnly = verdict(
      true,
      'name-heuristic',
      `name word "${readWord}"${readOnlyHint === true ? ' (annotation readOnlyHint=true agrees)' : ''}`,
    );
  } else if (readOnlyHint === true && trusted) {
    readOnly = verdict(true, 'annotation', 'annotation readOnlyHint=true from a trusted server');
  } else {
    readOnly = verdict(false, 'default', 'no read evidence; tools write unless shown otherwise');
    if (readOnlyHint === true) {
      disagreements.push(
        'annotation readOnlyHint=true ignored: server not trusted and the name has no read word',
      );
    }
  }
  const writes: CapabilityVerdict =
    overrides.writes !== undefined
      ? verdict(overrides.writes, 'override', `config override sets writes=${overrides.writes}`)
      : { ...readOnly, value: !readOnly.value };
  if (
    overrides.readOnly !== undefined &&
    overrides.writes !== undefined &&
    overrides.readOnly === overrides.writes
  ) {
    disagreements.push(
      `config override sets readOnly=${overrides.readOnly} and writes=${overrides.writes}`,
    );
  }

  // destructive
  let destructive: CapabilityVerdict;
  if (overrides.destructive !== undefined) {
    destructive = verdict(
      overrides.destructive,
      'override',
      `config override sets destructive=${overrides.destructive}`,
    );
  } else if (!writes.value) {
    destructive = verdict(false, readOnly.source, `read-only (${readOnly.reason})`);
  } else if (destructiveWord !== undefined) {
    destructive = verdict(true, 'name-heuristic', `name word "${destructiveWord}"`);
  } else if (destructiveHint === true) {
    destructive = verdict(true, 'annotation', 'annotation destructiveHint=true');
  } else if (destructiveHint === false && trusted) {
    destructive = verdict(
      false,
      'annotation',
      'annotation destructiveHint=false from a trusted server',
    );
  } else {
    destructive = verdict(
      true,
      'default',
      'writing tools count as destructive unless shown otherwise',
    );
  }

  // openWorld
  let openWorld: CapabilityVerdict;
  if (overrides.openWorld !== undefined) {
    openWorld = verdict(
      overrides.openWorld,
      'override',
      `config override sets openWorld=${overrides.openWorld}`,
    );
  } else if (openWorldHint === true) {
    openWorld = verdict(true, 'annotation', 'annotation openWorldHint=true');
  } else if (openWorldHint === false && trusted) {
    openWorld = verdict(
      false,
      'annotation',
      'annotation openWorldHint=false from a trusted server',
    );
  } else {
    openWorld = verdict(
      true,
      'default',
      'tools may reach outside the sandbox unless shown otherwise',
    );
  }

  return { readOnly, writes, destructive, openWorld, disagreements };
}
