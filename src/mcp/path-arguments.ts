import type { JsonSchemaObject } from '../core/tool-descriptor.js';

/** Property names (lower-cased, without `_`/`-`) that hold a path whatever their description says. */
const PATH_NAMES = new Set([
  'path',
  'paths',
  'file',
  'files',
  'filename',
  'filenames',
  'filepath',
  'filepaths',
  'directory',
  'directories',
  'dir',
  'dirs',
  'dirpath',
  'directorypath',
  'folder',
  'folderpath',
  'cwd',
  'workdir',
  'workingdirectory',
  'sourcepath',
  'destinationpath',
  'targetpath',
  'outputpath',
  'inputpath',
]);
/** Names that usually hold a path, unless a description says otherwise (`source` may be code). */
const MAYBE_PATH_NAMES = new Set([
  'source',
  'sources',
  'destination',
  'dest',
  'root',
  'target',
  'output',
]);
/** Names that hold a path only when described as a file / `file://` location. */
const URI_NAMES = new Set(['uri', 'url', 'uris', 'urls', 'fileuri', 'fileurl']);
/** Last words of camelCase/snake_case names that make a path (`outputFile`, `repo_path`). */
const PATH_LAST_WORDS = new Set([
  'path',
  'paths',
  'file',
  'files',
  'filename',
  'filepath',
  'dir',
  'directory',
  'folder',
]);

const PATHY_DESCRIPTION = /\b(?:file|directory|folder|dir)\s*(?:path|name)?\b|\bpath\b|file:\/\//i;
const FILE_URI_DESCRIPTION = /file:\/\/|\b(?:local )?file\b|\bdirectory\b|\bfolder\b/i;

const MAX_DEPTH = 8;

/**
 * The `$ref`s followed on the way to a schema (cycle guard). An immutable list: a branch extends
 * it without copying, and what one branch adds never leaks into its siblings.
 */
interface SeenRefs {
  readonly ref: string;
  readonly next: SeenRefs | undefined;
}

function hasSeen(seen: SeenRefs | undefined, ref: string): boolean {
  for (let node = seen; node !== undefined; node = node.next) if (node.ref === ref) return true;
  return false;
}

/** One walk over one input schema. Module-level functions, not closures: this runs per tool. */
interface Walk {
  readonly root: Record<string, unknown>;
  readonly found: Set<string>;
}

/**
 * Finds the argument locations of a tool's input schema that hold file paths, in the
 * `ToolDescriptor.pathArguments` notation: `path`, `paths[]`, `edits[].file`, `options.cwd`.
 *
 * Evidence: property names (`path`, `file`, `directory`, `cwd`, `*Path`, `*_file`, ...), and for
 * ambiguous names (`source`, `destination`, `root`) the description; `uri`/`url` only when the
 * description speaks of files or `file://`. Follows arrays, nested objects, local `$ref`s
 * (`#/$defs/...`, `#/definitions/...`) and `anyOf`/`oneOf`/`allOf`. Only string-typed (or
 * untyped) values count. Config overrides should be added on top by the caller; see also
 * {@link knownPathArguments} for servers whose schemas say too little.
 */
export function detectPathArguments(inputSchema: JsonSchemaObject): string[] {
  const walk: Walk = { root: inputSchema as Record<string, unknown>, found: new Set() };
  visitObject(walk, walk.root, '', undefined, 0);
  return [...walk.found];
}

/** Follows `$ref`s to a schema; the refs followed are added to `state.seen`. */
function resolveRef(
  walk: Walk,
  schema: Record<string, unknown>,
  state: { seen: SeenRefs | undefined },
): Record<string, unknown> | undefined {
  let current = schema;
  for (;;) {
    const ref = current['$ref'];
    if (typeof ref !== 'string') return current;
    if (!ref.startsWith('#/') || hasSeen(state.seen, ref)) return undefined;
    state.seen = { ref, next: state.seen };
    let target: unknown = walk.root;
    for (const part of ref.slice(2).split('/')) {
      const key = part.includes('~') ? part.replace(/~1/g, '/').replace(/~0/g, '~') : part;
      if (typeof target !== 'object' || target === null || !Object.hasOwn(target, key))
        return undefined;
      target = (target as Record<string, unknown>)[key];
    }
    if (!isRecord(target)) return undefined;
    current = target;
  }
}

const COMBINATORS = ['anyOf', 'oneOf', 'allOf'] as const;

/**
 * Pushes the schema plus its anyOf/oneOf/allOf branches (refs resolved) onto `out`, and returns
 * the refs seen after resolving the schema itself (what the caller carries on with).
 */
function collectVariants(
  walk: Walk,
  schema: Record<string, unknown>,
  seen: SeenRefs | undefined,
  depth: number,
  out: Record<string, unknown>[],
): SeenRefs | undefined {
  // Most schemas have no `$ref` and no combinator: the schema is its only form.
  if (
    typeof schema['$ref'] !== 'string' &&
    !Array.isArray(schema['anyOf']) &&
    !Array.isArray(schema['oneOf']) &&
    !Array.isArray(schema['allOf'])
  ) {
    if (depth <= MAX_DEPTH) out.push(schema);
    return seen;
  }
  const state = { seen };
  const resolved = resolveRef(walk, schema, state);
  if (resolved === undefined || depth > MAX_DEPTH) return state.seen;
  out.push(resolved);
  for (const key of COMBINATORS) {
    const branches = resolved[key];
    if (!Array.isArray(branches)) continue;
    for (const branch of branches)
      if (isRecord(branch)) collectVariants(walk, branch, state.seen, depth + 1, out);
  }
  return state.seen;
}

function visitObject(
  walk: Walk,
  schema: Record<string, unknown>,
  prefix: string,
  seen: SeenRefs | undefined,
  depth: number,
): void {
  if (depth > MAX_DEPTH) return;
  const forms: Record<string, unknown>[] = [];
  const after = collectVariants(walk, schema, seen, depth, forms);
  for (const form of forms) {
    const properties = form['properties'];
    if (!isRecord(properties)) continue;
    for (const name in properties) {
      if (!Object.hasOwn(properties, name)) continue;
      const property = properties[name];
      if (!isRecord(property)) continue;
      visitProperty(
        walk,
        name,
        property,
        prefix === '' ? name : `${prefix}.${name}`,
        after,
        depth + 1,
      );
    }
  }
}

function visitProperty(
  walk: Walk,
  name: string,
  schema: Record<string, unknown>,
  location: string,
  seen: SeenRefs | undefined,
  depth: number,
): void {
  const forms: Record<string, unknown>[] = [];
  const after = collectVariants(walk, schema, seen, depth, forms);
  // Decided at most once per property, and only when a string-typed value makes it matter.
  let isPath: boolean | undefined;
  for (const form of forms) {
    const type = form['type'];
    const items = form['items'];
    if (isRecord(items)) {
      const itemForms: Record<string, unknown>[] = [];
      collectVariants(walk, items, after, depth + 1, itemForms);
      if (itemForms.some(isStringish) && (isPath ??= isPathProperty(name, forms))) {
        walk.found.add(`${location}[]`);
      }
      for (const item of itemForms) {
        if (hasType(item['type'], 'object') || isRecord(item['properties'])) {
          visitObject(walk, item, `${location}[]`, after, depth + 1);
        }
      }
    }
    if (hasType(type, 'object') || isRecord(form['properties'])) {
      visitObject(walk, form, location, after, depth + 1);
    }
    if (isStringish(form) && (isPath ??= isPathProperty(name, forms))) walk.found.add(location);
  }
}

/** Whether a property holds a path: by its name, and for ambiguous names by its description. */
function isPathProperty(name: string, forms: readonly Record<string, unknown>[]): boolean {
  const kind = nameKind(name);
  if (kind === 'path') return true;
  if (kind === 'other') return false;
  let description = '';
  for (let index = 0; index < forms.length; index++) {
    const text = forms[index]!['description'];
    description += `${index > 0 ? ' ' : ''}${typeof text === 'string' ? text : ''}`;
  }
  return kind === 'uri'
    ? FILE_URI_DESCRIPTION.test(description)
    : description.trim() === '' || PATHY_DESCRIPTION.test(description);
}

type NameKind = 'path' | 'uri' | 'maybe' | 'other';

// Tools of one server (and every refresh) repeat the same property names; the verdict on a name
// alone is pure, so keep it. Bounded: cleared when full.
const NAME_KIND_LIMIT = 4096;
const nameKinds = new Map<string, NameKind>();

function nameKind(name: string): NameKind {
  let kind = nameKinds.get(name);
  if (kind !== undefined) return kind;
  kind = classifyName(name);
  if (nameKinds.size >= NAME_KIND_LIMIT) nameKinds.clear();
  nameKinds.set(name, kind);
  return kind;
}

function classifyName(name: string): NameKind {
  const normalized = name.toLowerCase().replace(/[_-]/g, '');
  if (PATH_NAMES.has(normalized)) return 'path';
  if (URI_NAMES.has(normalized)) return 'uri';
  if (MAYBE_PATH_NAMES.has(normalized)) return 'maybe';
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter((word) => word !== '');
  const last = words.at(-1)?.toLowerCase();
  return words.length > 1 && last !== undefined && PATH_LAST_WORDS.has(last) ? 'path' : 'other';
}

function isStringish(schema: Record<string, unknown>): boolean {
  const type = schema['type'];
  if (typeof type === 'string') return type === 'string';
  if (Array.isArray(type) && type.some((item) => typeof item === 'string'))
    return type.includes('string');
  return !isRecord(schema['properties']) && !isRecord(schema['items']);
}

/** `type` is `name` or a list holding it. */
function hasType(type: unknown, name: string): boolean {
  return type === name || (Array.isArray(type) && type.includes(name));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Path arguments of well-known servers, by npm package, for tools whose schemas say too little.
 * `@modelcontextprotocol/server-filesystem` is fully covered by detection today; the table pins
 * it so a schema change upstream cannot silently turn rewriting off.
 */
export const KNOWN_PATH_ARGUMENTS: Readonly<
  Record<string, Readonly<Record<string, readonly string[]>>>
> = {
  '@modelcontextprotocol/server-filesystem': {
    read_file: ['path'],
    read_text_file: ['path'],
    read_media_file: ['path'],
    read_multiple_files: ['paths[]'],
    write_file: ['path'],
    edit_file: ['path'],
    create_directory: ['path'],
    list_directory: ['path'],
    list_directory_with_sizes: ['path'],
    directory_tree: ['path'],
    move_file: ['source', 'destination'],
    search_files: ['path'],
    get_file_info: ['path'],
  },
};

/**
 * The known path arguments of `toolName` for a server launched with `commandLine` (the command
 * and its args; matched by package name, e.g. `npx -y @modelcontextprotocol/server-filesystem`).
 * Empty when nothing is known.
 */
export function knownPathArguments(commandLine: readonly string[], toolName: string): string[] {
  return [...(knownPathArgumentsOf(commandLine)?.[toolName] ?? [])];
}

/**
 * The known path-argument table (tool name → arguments) of the server launched with
 * `commandLine`, or undefined when it is not a known server. Looked up once per listing.
 */
export function knownPathArgumentsOf(
  commandLine: readonly string[],
): Readonly<Record<string, readonly string[]>> | undefined {
  for (const [packageName, tools] of Object.entries(KNOWN_PATH_ARGUMENTS)) {
    if (commandLine.some((part) => part.includes(packageName))) return tools;
  }
  return undefined;
}
