import { mkdir, readFile, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, relative, sep } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage, isErrno } from '../errors.js';
import type { ToolEntry, ToolResult } from '../core/tool-descriptor.js';
import { isInside } from '../sandbox/source-dir.js';
import type { PathMap } from '../sandbox/types.js';
import { createLocalDescriptor, textResult } from './local-descriptor.js';

/** Names of the built-in tools. */
export const BUILTIN_TOOL_NAMES = [
  'read_file',
  'write_file',
  'edit_file',
  'list_directory',
] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** True when `name` is a built-in tool name. */
export function isBuiltinToolName(name: string): name is BuiltinToolName {
  return (BUILTIN_TOOL_NAMES as readonly string[]).includes(name);
}

/** Options for {@link createBuiltinTools}. */
export interface BuiltinToolsOptions {
  /**
   * The path map of the folder the tools work in (the sandbox's, or one over the project when
   * the sandbox is off). A function, so the tools follow a sandbox created after them.
   */
  paths: () => PathMap;
  /** Which tools to create (default: all). */
  names?: readonly BuiltinToolName[];
  /** Largest file `read_file` returns whole (default 512 KB); bigger reads need `offset`/`limit`. */
  maxReadBytes?: number;
}

const MAX_LIST_ENTRIES = 1000;

/**
 * Creates the built-in file tools as {@link ToolEntry}s (`source: 'builtin'`, ids
 * `builtin:NAME`). Every path is resolved through the path map (`PATH_OUTSIDE_SANDBOX` for
 * escapes) and then checked again by realpath, so a symlink inside the root cannot lead out.
 * Failures the model should see (missing file, escape, no match) come back as `isError`
 * results; nothing is thrown for them.
 */
export function createBuiltinTools(options: BuiltinToolsOptions): ToolEntry[] {
  const names = options.names ?? BUILTIN_TOOL_NAMES;
  const maxRead = options.maxReadBytes ?? 512_000;
  const factories: Record<BuiltinToolName, () => ToolEntry> = {
    read_file: () => ({
      descriptor: createLocalDescriptor({
        id: 'builtin:read_file',
        name: 'read_file',
        source: 'builtin',
        description:
          'Read a text file in the workspace. Paths are relative to the project root. ' +
          'Use offset/limit (lines, 1-based offset) for large files.',
        inputSchema: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'File path relative to the project root.' },
            offset: { type: 'integer', minimum: 1, description: 'First line to return (1-based).' },
            limit: { type: 'integer', minimum: 1, description: 'Most lines to return.' },
          },
          required: ['path'],
          additionalProperties: false,
        },
        capabilities: { readOnly: true },
        capabilityReason: 'built-in tool: only reads files',
        pathArguments: ['path'],
      }),
      execute: (args) =>
        guarded(options.paths, args, async (paths, target, logical) => {
          const info = await stat(target);
          if (info.isDirectory())
            return textResult(`"${logical}" is a directory; use list_directory.`, true);
          const offset = numberArg(args['offset']);
          const limit = numberArg(args['limit']);
          if (offset === undefined && limit === undefined && info.size > maxRead) {
            return textResult(
              `"${logical}" is ${info.size} bytes (limit ${maxRead}); read it in parts with offset and limit.`,
              true,
            );
          }
          const text = await readFile(target, 'utf8');
          if (offset === undefined && limit === undefined) return textResult(text);
          const lines = text.split('\n');
          const start = (offset ?? 1) - 1;
          return textResult(
            lines.slice(start, limit === undefined ? undefined : start + limit).join('\n'),
          );
        }),
    }),
    write_file: () => ({
      descriptor: createLocalDescriptor({
        id: 'builtin:write_file',
        name: 'write_file',
        source: 'builtin',
        description:
          'Create or replace a text file in the workspace (parent folders are created). ' +
          'Paths are relative to the project root.',
        inputSchema: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'File path relative to the project root.' },
            content: { type: 'string', description: 'The whole new content.' },
          },
          required: ['path', 'content'],
          additionalProperties: false,
        },
        capabilities: { readOnly: false, destructive: true },
        capabilityReason: 'built-in tool: replaces file contents',
        pathArguments: ['path'],
      }),
      execute: (args) =>
        guarded(
          options.paths,
          args,
          async (_paths, target, logical) => {
            if (typeof args['content'] !== 'string')
              return textResult('"content" must be a string.', true);
            await mkdir(dirname(target), { recursive: true });
            await writeFile(target, args['content']);
            return textResult(`Wrote ${Buffer.byteLength(args['content'])} bytes to ${logical}.`);
          },
          { forWrite: true },
        ),
    }),
    edit_file: () => ({
      descriptor: createLocalDescriptor({
        id: 'builtin:edit_file',
        name: 'edit_file',
        source: 'builtin',
        description:
          'Replace exact text in a file. old_text must occur exactly once unless replace_all is true.',
        inputSchema: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'File path relative to the project root.' },
            old_text: { type: 'string', minLength: 1 },
            new_text: { type: 'string' },
            replace_all: { type: 'boolean', default: false },
          },
          required: ['path', 'old_text', 'new_text'],
          additionalProperties: false,
        },
        capabilities: { readOnly: false },
        capabilityReason: 'built-in tool: edits files',
        pathArguments: ['path'],
      }),
      execute: (args) =>
        guarded(options.paths, args, async (_paths, target, logical) => {
          const oldText = args['old_text'];
          const newText = args['new_text'];
          if (typeof oldText !== 'string' || oldText === '' || typeof newText !== 'string') {
            return textResult('"old_text" (non-empty) and "new_text" must be strings.', true);
          }
          const text = await readFile(target, 'utf8');
          const count = text.split(oldText).length - 1;
          if (count === 0)
            return textResult(
              `old_text was not found in ${logical}; read the file and retry.`,
              true,
            );
          if (count > 1 && args['replace_all'] !== true) {
            return textResult(
              `old_text occurs ${count} times in ${logical}; add context or set replace_all.`,
              true,
            );
          }
          await writeFile(target, text.split(oldText).join(newText));
          return textResult(`Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${logical}.`);
        }),
    }),
    list_directory: () => ({
      descriptor: createLocalDescriptor({
        id: 'builtin:list_directory',
        name: 'list_directory',
        source: 'builtin',
        description: 'List a folder in the workspace: one entry per line, folders end with "/".',
        inputSchema: {
          type: 'object',
          properties: {
            path: {
              type: 'string',
              description: 'Folder relative to the project root ("." for the root).',
            },
          },
          required: ['path'],
          additionalProperties: false,
        },
        capabilities: { readOnly: true },
        capabilityReason: 'built-in tool: only lists folders',
        pathArguments: ['path'],
      }),
      execute: (args) =>
        guarded(options.paths, args, async (_paths, target, logical) => {
          const entries = (await readdir(target, { withFileTypes: true }))
            // The sandbox's git metadata is not the model's business.
            .filter((entry) => entry.name !== '.git')
            .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
            .sort();
          const shown = entries.slice(0, MAX_LIST_ENTRIES);
          const more =
            entries.length > shown.length
              ? `\n(${entries.length - shown.length} more not shown)`
              : '';
          return textResult(
            shown.length === 0 ? `(${logical} is empty)` : `${shown.join('\n')}${more}`,
          );
        }),
    }),
  };
  return names.map((name) => factories[name]());
}

async function guarded(
  getPaths: () => PathMap,
  args: Record<string, unknown>,
  run: (paths: PathMap, target: string, logical: string) => Promise<ToolResult>,
  options: { forWrite?: boolean } = {},
): Promise<ToolResult> {
  const path = args['path'];
  if (typeof path !== 'string' || path === '')
    return textResult('"path" must be a non-empty string.', true);
  try {
    const paths = getPaths();
    const target = paths.toSandbox(path);
    await assertRealpathInside(paths.root, target, options.forWrite === true);
    const logical = toLogical(paths.root, target);
    return await run(paths, target, logical);
  } catch (error) {
    if (AgentsError.hasCode(error, AgentsErrorCode.PathOutsideSandbox)) {
      return textResult(`${error.message}`, true);
    }
    if (isErrno(error, 'ENOENT')) return textResult(`"${path}" does not exist.`, true);
    if (isErrno(error, 'ENOTDIR')) return textResult(`"${path}" is not a folder.`, true);
    if (isErrno(error, 'EISDIR')) return textResult(`"${path}" is a folder.`, true);
    return textResult(`Failed on "${path}": ${errorMessage(error)}`, true);
  }
}

/**
 * Second line of defence after the path map: the real path of the target (or, for a file not
 * yet written, of its nearest existing ancestor) must stay under the real root.
 */
async function assertRealpathInside(
  root: string,
  target: string,
  forWrite: boolean,
): Promise<void> {
  const realRoot = await realpath(root);
  let probe = target;
  for (;;) {
    try {
      const real = await realpath(probe);
      if (!isInside(real, realRoot)) {
        throw new AgentsError(
          AgentsErrorCode.PathOutsideSandbox,
          `Path "${toLogical(root, target)}" resolves outside the workspace (through a symbolic link); refused.`,
          { details: { path: target, root } },
        );
      }
      return;
    } catch (error) {
      if (!isErrno(error, 'ENOENT') || !forWrite) {
        if (isErrno(error, 'ENOENT')) return; // the tool reports the missing file itself
        throw error;
      }
      const parent = dirname(probe);
      if (parent === probe) return;
      probe = parent;
    }
  }
}

function toLogical(root: string, target: string): string {
  const rel = relative(root, target).split(sep).join('/');
  return rel === '' ? '.' : rel;
}

function numberArg(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
