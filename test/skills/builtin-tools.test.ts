import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { createBuiltinTools } from '../../src/skills/builtin-tools.js';
import type { PathMap } from '../../src/sandbox/types.js';
import type { ToolEntry } from '../../src/core/tool-descriptor.js';

/** A lexical path map, as the sandbox provides: the realpath check is the tools' own. */
function lexicalPathMap(root: string): PathMap {
  return {
    root,
    toSandbox(path) {
      const target = isAbsolute(path) ? path : resolve(root, path);
      const rel = relative(root, target);
      if (rel.startsWith('..'))
        throw new AgentsError('PATH_OUTSIDE_SANDBOX', `Path "${path}" is outside the sandbox.`);
      return target;
    },
    fromSandbox: (text) => text.split(root).join('.'),
  };
}

function textOf(result: { content: unknown[] }): string {
  return result.content.map((block) => (block as { text?: string }).text ?? '').join('');
}

describe('built-in tools', () => {
  let dir: string;
  let root: string;
  let tools: Map<string, ToolEntry>;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-builtin-')));
    root = join(dir, 'root');
    await mkdir(join(root, 'src'), { recursive: true });
    await writeFile(join(root, 'src', 'a.txt'), 'one\ntwo\nthree\n');
    await writeFile(join(dir, 'secret.txt'), 'secret');
    tools = new Map(
      createBuiltinTools({ paths: () => lexicalPathMap(root) }).map((tool) => [
        tool.descriptor.name,
        tool,
      ]),
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const call = (name: string, args: Record<string, unknown>) => tools.get(name)!.execute(args, {});

  it('declares builtin descriptors with capabilities and path arguments', () => {
    const read = tools.get('read_file')!.descriptor;
    expect(read).toMatchObject({
      id: 'builtin:read_file',
      source: 'builtin',
      pathArguments: ['path'],
    });
    expect(read.capabilities.readOnly.value).toBe(true);
    expect(tools.get('write_file')!.descriptor.capabilities.writes.value).toBe(true);
    expect(tools.get('edit_file')!.descriptor.capabilities.readOnly.value).toBe(false);
    expect(read.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads, writes, edits and lists inside the root', async () => {
    expect(textOf(await call('read_file', { path: 'src/a.txt' }))).toBe('one\ntwo\nthree\n');
    expect(textOf(await call('read_file', { path: 'src/a.txt', offset: 2, limit: 1 }))).toBe('two');
    expect(textOf(await call('write_file', { path: 'new/b.txt', content: 'hi' }))).toContain(
      'new/b.txt',
    );
    expect(await readFile(join(root, 'new', 'b.txt'), 'utf8')).toBe('hi');
    expect(
      textOf(await call('edit_file', { path: 'src/a.txt', old_text: 'two', new_text: '2' })),
    ).toMatch(/Replaced 1/);
    expect(await readFile(join(root, 'src', 'a.txt'), 'utf8')).toBe('one\n2\nthree\n');
    expect(textOf(await call('list_directory', { path: '.' }))).toBe('new/\nsrc/');
    const ambiguous = await call('edit_file', { path: 'src/a.txt', old_text: 'e', new_text: 'E' });
    expect(ambiguous.isError).toBe(true);
    expect((await call('read_file', { path: 'missing.txt' })).isError).toBe(true);
  });

  it('refuses paths that escape the root, lexically or through a symlink', async () => {
    const outside = await call('read_file', { path: '../secret.txt' });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/outside/);
    await symlink(dir, join(root, 'link'));
    const viaLink = await call('read_file', { path: 'link/secret.txt' });
    expect(viaLink.isError).toBe(true);
    expect(textOf(viaLink)).toMatch(/symbolic link/);
    const writeViaLink = await call('write_file', { path: 'link/new/evil.txt', content: 'x' });
    expect(writeViaLink.isError).toBe(true);
    await expect(readFile(join(dir, 'new', 'evil.txt'))).rejects.toThrow();
  });
});
