import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Document, LineCounter, Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import { closest } from '../core/suggest.js';
import { AgentsError, AgentsErrorCode, isErrno } from '../errors.js';
import {
  bothSpellingsMessage,
  keyAliasesOf,
  renameAliasedKeys,
  warnDeprecatedKey,
} from './key-aliases.js';

let yamlModule: typeof Yaml | undefined;
/**
 * The yaml package (72 CommonJS modules), required on the first parse rather than on import:
 * the package root exports {@link parseYaml} and should load in a blink (issue 29). `require`,
 * not `import()`, so that parsing stays synchronous; under Node both give the same instance
 * (its "node" export is the CommonJS build).
 */
function yaml(): typeof Yaml {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
}

/** One problem found in a config file, with its position when known (1-based). */
export interface ConfigProblem {
  /** Field path inside the file, e.g. `timeouts.callMs` (empty for the whole document). */
  path: string;
  /** What is wrong and what was expected. */
  message: string;
  line?: number;
  column?: number;
}

/** Options for {@link parseYaml}. */
export interface ParseYamlOptions {
  /** File name used in messages (the text's origin). */
  file?: string;
  /**
   * Where deprecation warnings go (a key in its old spelling, once per file and key). Default:
   * `process.emitWarning` as a `DeprecationWarning`.
   */
  onWarning?: (message: string) => void;
}

/**
 * Parses YAML text and validates it against a zod schema.
 *
 * Returns the schema's output type. Throws `CONFIG_INVALID` whose message names the file, line
 * and column, the field path and what was expected; `details.problems` holds the
 * {@link ConfigProblem}s and `details.file` the file name. Broken YAML, duplicate keys,
 * unknown fields (strict objects) and missing fields all produce such a message.
 */
export function parseYaml<S extends z.ZodType>(
  text: string,
  schema: S,
  options: ParseYamlOptions = {},
): z.output<S> {
  const file = options.file ?? '<input>';
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    const problems: ConfigProblem[] = document.errors.map((error) => {
      // linePos is only filled with prettyErrors; compute it from the offset instead.
      const position = error.linePos?.[0] ?? lineCounter.linePos(error.pos[0]);
      return {
        path: '',
        // The parser's own message repeats the position; keep only its first line.
        message: `invalid YAML: ${error.message.split('\n')[0] ?? error.message}`,
        ...(position ? { line: position.line, column: position.col } : {}),
      };
    });
    throw configError(file, problems);
  }
  let value: unknown = document.toJS({ maxAliasCount: 100 });
  // Deprecated key spellings: renamed (with a warning naming the line) before validation, so
  // the schema and the code only ever see the new names.
  const renamedBack = new Map<string, string>();
  const aliases = keyAliasesOf(schema);
  if (aliases !== undefined) {
    const keyLine = (key: string): { line: number; column: number } | undefined => {
      const offset = findKeyOffset(document, [], key);
      const position = offset === undefined ? undefined : lineCounter.linePos(offset);
      return position === undefined ? undefined : { line: position.line, column: position.col };
    };
    const renaming = renameAliasedKeys(value, aliases);
    if (renaming.conflicts.length > 0) {
      throw configError(
        file,
        renaming.conflicts.map((conflict) => ({
          path: conflict.oldKey,
          message: bothSpellingsMessage(conflict),
          ...keyLine(conflict.oldKey),
        })),
      );
    }
    for (const renamed of renaming.renamed) {
      warnDeprecatedKey(file, keyLine(renamed.oldKey)?.line, renamed, options.onWarning);
      renamedBack.set(renamed.newKey, renamed.oldKey);
    }
    value = renaming.value;
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) =>
    issueToProblem(
      { ...issue, path: asWritten(issue.path, renamedBack) } as z.core.$ZodIssue,
      document,
      lineCounter,
      document.toJS({ maxAliasCount: 100 }),
      schema,
    ),
  );
  throw configError(file, problems, parsed.error);
}

/** A path in the renamed value, as the file spells it (so positions and messages match it). */
function asWritten(path: readonly PropertyKey[], renamedBack: ReadonlyMap<string, string>) {
  const [first, ...rest] = path;
  return typeof first === 'string' && renamedBack.has(first)
    ? [renamedBack.get(first)!, ...rest]
    : [...path];
}

/**
 * Reads a YAML file and validates it (see {@link parseYaml}).
 *
 * Throws `CONFIG_NOT_FOUND` when the file does not exist and `CONFIG_INVALID` when it cannot be
 * read, parsed or validated.
 */
export async function loadYamlFile<S extends z.ZodType>(
  path: string,
  schema: S,
): Promise<z.output<S>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) {
      throw new AgentsError(
        AgentsErrorCode.ConfigNotFound,
        `Config file ${path} does not exist; create it or check the name.`,
        { cause: error, details: { file: path } },
      );
    }
    throw new AgentsError(AgentsErrorCode.ConfigInvalid, `Cannot read config file ${path}.`, {
      cause: error,
      details: { file: path, problems: [] },
    });
  }
  return parseYaml(text, schema, { file: path });
}

/** Formats problems as `file:line:col: path: message` lines, the way compilers do. */
export function formatConfigProblems(file: string, problems: readonly ConfigProblem[]): string {
  return problems
    .map((problem) => {
      const where =
        problem.line === undefined ? file : `${file}:${problem.line}:${problem.column ?? 1}`;
      const field = problem.path === '' ? '' : ` ${problem.path}:`;
      return `${where}:${field} ${problem.message}`;
    })
    .join('\n');
}

function configError(file: string, problems: ConfigProblem[], cause?: unknown): AgentsError {
  const count = problems.length === 1 ? 'a problem' : `${problems.length} problems`;
  return new AgentsError(
    AgentsErrorCode.ConfigInvalid,
    `Config file ${file} has ${count}; fix it and retry:\n${formatConfigProblems(file, problems)}`,
    { cause, details: { file, problems } },
  );
}

function issueToProblem(
  issue: z.core.$ZodIssue,
  document: Document,
  lineCounter: LineCounter,
  value: unknown,
  schema?: z.ZodType,
): ConfigProblem {
  const path = issue.path.map((segment) =>
    typeof segment === 'symbol' ? String(segment) : segment,
  );
  let offset: number | undefined;
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    // Point at the first unknown key itself, not at the object holding it.
    const keyName = issue.keys[0];
    offset = keyName === undefined ? undefined : findKeyOffset(document, path, keyName);
    const known = schema === undefined ? [] : knownKeysAt(schema, path);
    const meant = issue.keys.map((key) => [key, closest(key, known)] as const);
    const hints = meant.filter(([, near]) => near !== undefined);
    message = `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
      .map((key) => `"${key}"`)
      .join(', ')} (${
      hints.length > 0
        ? `did you mean ${hints.map(([key, near]) => `"${near}"${issue.keys.length > 1 ? ` for "${key}"` : ''}`).join(', ')}?`
        : known.length > 0
          ? `allowed here: ${known.join(', ')}`
          : 'check the spelling; allowed fields are in the JSON Schema'
    })`;
  } else if (issue.code === 'invalid_type') {
    // zod 4 leaves `issue.input` out unless asked, so look the value up in the document.
    const actual = valueAt(value, path);
    message = actual.found
      ? `expected ${issue.expected}, got ${describeValue(actual.value)}`
      : `missing required field (expected ${issue.expected})`;
  }
  offset ??= findNodeOffset(document, path);
  const position = offset === undefined ? undefined : lineCounter.linePos(offset);
  return {
    path: formatPath(path),
    message,
    ...(position ? { line: position.line, column: position.col } : {}),
  };
}

/** Wrappers whose inner schema holds the fields (optional, default, ...), by their def key. */
const INNER: Record<string, string> = {
  optional: 'innerType',
  nullable: 'innerType',
  default: 'innerType',
  prefault: 'innerType',
  nonoptional: 'innerType',
  readonly: 'innerType',
  catch: 'innerType',
  pipe: 'in',
};

/**
 * The field names the schema allows in the object at `path` (every branch of a union), for a
 * "did you mean" on an unknown one. Best effort: a schema shape it does not know gives none.
 */
function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const keys = new Set<string>();
  const visit = (node: unknown, at: number, depth: number): void => {
    if (depth > 40 || typeof node !== 'object' || node === null) return;
    const def = (node as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
    if (def === undefined) return;
    const type = def['type'] as string;
    const inner = INNER[type];
    if (inner !== undefined) return visit(def[inner], at, depth + 1);
    if (type === 'lazy') return visit((def['getter'] as () => unknown)(), at, depth + 1);
    if (type === 'union')
      return (def['options'] as unknown[]).forEach((option) => visit(option, at, depth + 1));
    if (type === 'intersection') {
      visit(def['left'], at, depth + 1);
      return visit(def['right'], at, depth + 1);
    }
    if (at === path.length) {
      if (type === 'object') for (const key of Object.keys(def['shape'] as object)) keys.add(key);
      return;
    }
    if (type === 'object') {
      const segment = path[at];
      const field = (def['shape'] as Record<string, unknown>)[String(segment)];
      return visit(field, at + 1, depth + 1);
    }
    if (type === 'array') return visit(def['element'], at + 1, depth + 1);
    if (type === 'record') return visit(def['valueType'], at + 1, depth + 1);
  };
  visit(schema, 0, 0);
  return [...keys];
}

/** The value at `path` in the parsed document, and whether the path exists at all. */
function valueAt(root: unknown, path: readonly PropertyKey[]): { found: boolean; value?: unknown } {
  let current: unknown = root;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment))
      return { found: false };
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return { found: true, value: current };
}

/** A short "type value" description of what the user wrote, e.g. `string "fast"`. */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'object') return 'a map';
  const shown = JSON.stringify(value) ?? typeof value;
  return `${typeof value} ${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown}`;
}

/** The nearest existing node on the path: a missing field points at its parent object. */
function findNodeOffset(document: Document, path: readonly PropertyKey[]): number | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node: unknown =
      length === 0 ? document.contents : document.getIn(path.slice(0, length), true);
    if (yaml().isNode(node) && node.range) return node.range[0];
  }
  return undefined;
}

function findKeyOffset(
  document: Document,
  path: readonly PropertyKey[],
  key: string,
): number | undefined {
  const container: unknown = path.length === 0 ? document.contents : document.getIn(path, true);
  if (!yaml().isMap(container)) return undefined;
  for (const pair of container.items) {
    const pairKey: unknown = pair.key;
    if (yaml().isScalar(pairKey) && String(pairKey.value) === key)
      return (pairKey as YamlNode).range?.[0];
  }
  return undefined;
}

function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}
