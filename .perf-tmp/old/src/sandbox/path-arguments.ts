import type { JsonSchemaObject } from '../registry/tool-descriptor.js';

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
  const found = new Set<string>();
  const root = inputSchema as Record<string, unknown>;

  const resolveRef = (
    schema: Record<string, unknown>,
    seen: Set<string>,
  ): Record<string, unknown> | undefined => {
    const ref = schema['$ref'];
    if (typeof ref !== 'string') return schema;
    if (seen.has(ref) || !ref.startsWith('#/')) return undefined;
    seen.add(ref);
    let target: unknown = root;
    for (const part of ref.slice(2).split('/')) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
      if (typeof target !== 'object' || target === null || !Object.hasOwn(target, key))
        return undefined;
      target = (target as Record<string, unknown>)[key];
    }
    return isRecord(target) ? resolveRef(target, seen) : undefined;
  };

  /** The schema plus its anyOf/oneOf/allOf branches, refs resolved. */
  const variants = (
    schema: Record<string, unknown>,
    seen: Set<string>,
    depth: number,
  ): Record<string, unknown>[] => {
    const resolved = resolveRef(schema, seen);
    if (resolved === undefined || depth > MAX_DEPTH) return [];
    const out = [resolved];
    for (const key of ['anyOf', 'oneOf', 'allOf']) {
      const branches = resolved[key];
      if (!Array.isArray(branches)) continue;
      for (const branch of branches)
        if (isRecord(branch)) out.push(...variants(branch, new Set(seen), depth + 1));
    }
    return out;
  };

  const visitObject = (
    schema: Record<string, unknown>,
    prefix: string,
    seen: Set<string>,
    depth: number,
  ): void => {
    if (depth > MAX_DEPTH) return;
    for (const variant of variants(schema, seen, depth)) {
      const properties = variant['properties'];
      if (!isRecord(properties)) continue;
      for (const [name, property] of Object.entries(properties)) {
        if (!isRecord(property)) continue;
        visitProperty(
          name,
          property,
          prefix === '' ? name : `${prefix}.${name}`,
          new Set(seen),
          depth + 1,
        );
      }
    }
  };

  const visitProperty = (
    name: string,
    schema: Record<string, unknown>,
    location: string,
    seen: Set<string>,
    depth: number,
  ): void => {
    const forms = variants(schema, seen, depth);
    const description = forms
      .map((form) => (typeof form['description'] === 'string' ? form['description'] : ''))
      .join(' ');
    for (const form of forms) {
      const types = typeList(form['type']);
      if (types.includes('array') || isRecord(form['items'])) {
        const items = form['items'];
        if (isRecord(items)) {
          const itemForms = variants(items, new Set(seen), depth + 1);
          if (itemForms.some((item) => isStringish(item)) && isPathName(name, description))
            found.add(`${location}[]`);
          for (const item of itemForms) {
            if (typeList(item['type']).includes('object') || isRecord(item['properties'])) {
              visitObject(item, `${location}[]`, new Set(seen), depth + 1);
            }
          }
        }
      }
      if (typeList(form['type']).includes('object') || isRecord(form['properties'])) {
        visitObject(form, location, new Set(seen), depth + 1);
      }
      if (isStringish(form) && isPathName(name, description)) found.add(location);
    }
  };

  visitObject(root, '', new Set(), 0);
  return [...found];
}

function isPathName(name: string, description: string): boolean {
  const normalized = name.toLowerCase().replace(/[_-]/g, '');
  if (PATH_NAMES.has(normalized)) return true;
  if (URI_NAMES.has(normalized)) return FILE_URI_DESCRIPTION.test(description);
  if (MAYBE_PATH_NAMES.has(normalized))
    return description.trim() === '' || PATHY_DESCRIPTION.test(description);
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter((word) => word !== '');
  const last = words.at(-1)?.toLowerCase();
  return words.length > 1 && last !== undefined && PATH_LAST_WORDS.has(last);
}

function isStringish(schema: Record<string, unknown>): boolean {
  const types = typeList(schema['type']);
  if (types.length === 0) return !isRecord(schema['properties']) && !isRecord(schema['items']);
  return types.includes('string');
}

function typeList(type: unknown): string[] {
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((item): item is string => typeof item === 'string');
  return [];
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
  for (const [packageName, tools] of Object.entries(KNOWN_PATH_ARGUMENTS)) {
    if (!commandLine.some((part) => part.includes(packageName))) continue;
    const known = tools[toolName];
    if (known !== undefined) return [...known];
  }
  return [];
}
