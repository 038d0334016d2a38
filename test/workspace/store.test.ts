import { mkdtemp, readFile, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WORKSPACE_GITIGNORE } from '../../src/workspace/workspace-files.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { missingProjectFiles, resolveServerPaths } from '../../src/workspace/server-paths.js';
import { writeFileAtomic } from '../../src/core/atomic-write.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

describe('workspace store', () => {
  let dir: string;
  let store: WorkspaceStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-store-'));
    store = createWorkspaceStore(join(dir, '.agents'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('puts, gets, lists and removes each kind as YAML files', async () => {
    const file = await store.put('server', 'fs', {
      transport: 'stdio',
      command: 'node',
      args: ['s.js'],
    });
    expect(file).toBe(join(dir, '.agents', 'servers', 'fs.yaml'));
    expect(await readFile(file, 'utf8')).toContain('command: node');
    await store.put('tool', 'echo', { id: 'tools.echo', server: 'fs', tool: 'echo' });
    await store.put('skill', 'basic', { tools: ['read_file'], mcpServers: ['fs'] });
    await store.put('actor', 'helper', { skills: ['basic'] });

    const server = await store.get('server', 'fs');
    expect(server).toMatchObject({ name: 'fs', transport: 'stdio', trusted: false });
    expect((await store.get('actor', 'helper')).checkpointer).toEqual({
      type: 'sqlite',
      path: '.agents/checkpoints.sqlite',
    });
    expect((await store.findTool('tools.echo'))?.name).toBe('echo');
    expect((await store.list('skill')).records.map((record) => record.name)).toEqual(['basic']);

    expect(await store.remove('tool', 'echo')).toBe(true);
    expect(await store.remove('tool', 'echo')).toBe(false);
    await expect(store.get('tool', 'echo')).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    await expect(store.get('actor', 'nobody')).rejects.toMatchObject({ code: 'ACTOR_NOT_FOUND' });
  });

  it('validates before writing and refuses to replace an existing record without overwrite', async () => {
    await expect(
      // @ts-expect-error: a typo must fail at runtime too
      store.put('server', 'bad', { transport: 'stdio', comand: 'node' }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(await store.has('server', 'bad')).toBe(false);
    await store.put('actor', 'a', { skills: ['x'] });
    await expect(store.put('actor', 'a', { skills: ['y'] })).rejects.toThrow(/already exists/);
    await store.put('actor', 'a', { skills: ['y'] }, { overwrite: true });
    expect((await store.get('actor', 'a')).skills).toEqual(['y']);
    await expect(store.put('actor', '../escape', { skills: ['x'] })).rejects.toThrow(
      /not a valid actor name/,
    );
  });

  it('reports a broken file with path and line, keeps listing the others, and never overwrites it', async () => {
    await store.put('actor', 'good', { skills: ['s'] });
    const broken = join(dir, '.agents', 'actors', 'broken.yaml');
    const original = 'skills: [s]\nmodle: typo\n';
    await writeFile(broken, original);
    const listing = await store.list('actor');
    expect(listing.records.map((record) => record.name)).toEqual(['good']);
    expect(listing.problems).toHaveLength(1);
    expect(listing.problems[0]?.file).toBe(broken);
    expect(listing.problems[0]?.error.message).toContain(`${broken}:2:1`);
    await expect(
      store.put('actor', 'broken', { skills: ['s'] }, { overwrite: true }),
    ).rejects.toThrow(/Refusing to overwrite .*broken\.yaml: it is broken/);
    expect(await readFile(broken, 'utf8')).toBe(original);
  });

  it('writes atomically: no temp files remain and a failed write leaves the old file', async () => {
    const target = join(dir, 'x', 'file.yaml');
    await writeFileAtomic(target, 'a: 1\n');
    await writeFileAtomic(target, 'a: 2\n');
    expect(await readFile(target, 'utf8')).toBe('a: 2\n');
    expect(await readdir(join(dir, 'x'))).toEqual(['file.yaml']);
    // A directory where the file should go makes rename fail; the temp file must be cleaned.
    await mkdir(join(dir, 'x', 'dir.yaml'));
    await expect(writeFileAtomic(join(dir, 'x', 'dir.yaml'), 'b')).rejects.toThrow();
    expect((await readdir(join(dir, 'x'))).sort()).toEqual(['dir.yaml', 'file.yaml']);
  });

  it('rejects a name field that disagrees with the file name and resolves paths against the project', async () => {
    await mkdir(join(dir, '.agents', 'skills'), { recursive: true });
    await writeFile(join(dir, '.agents', 'skills', 'one.yaml'), 'name: two\n');
    await expect(store.get('skill', 'one')).rejects.toThrow(/does not match the file name "one"/);
    expect(store.resolvePath('src')).toBe(join(dir, 'src'));
    expect(store.projectDir).toBe(dir);
  });

  it('launches ./ and ../ command and args from the project folder; the file keeps what was written', async () => {
    await store.put('server', 'local', {
      transport: 'stdio',
      command: './bin/server',
      args: ['./tools/s.mjs', '../shared/t.mjs', '.', 'src', '--flag=./x', '/abs/y.js'],
      cwd: 'work',
    });
    await store.put('server', 'path', { transport: 'stdio', command: 'node', args: ['s.js'] });
    await store.put('server', 'remote', { transport: 'streamable-http', url: 'http://h/mcp' });
    const local = await store.get('server', 'local');
    expect(local).toMatchObject({
      command: join(dir, 'bin', 'server'),
      // `.` and `src` stay relative to the server's working folder (the sandbox root).
      args: [
        join(dir, 'tools', 's.mjs'),
        join(dir, '..', 'shared', 't.mjs'),
        '.',
        'src',
        '--flag=./x',
        '/abs/y.js',
      ],
      cwd: join(dir, 'work'),
    });
    expect((await store.list('server')).records.map((record) => record.value)).toContainEqual(
      local,
    );
    expect(await store.get('server', 'path')).toMatchObject({ command: 'node', args: ['s.js'] });
    expect(await store.get('server', 'path')).not.toHaveProperty('cwd');
    expect(await store.get('server', 'remote')).toMatchObject({ url: 'http://h/mcp' });
    const text = await readFile(store.file('server', 'local'), 'utf8');
    expect(text).toContain('./tools/s.mjs');
    expect(text).not.toContain(dir);

    // Inline servers of a skill follow the same rule.
    await store.put('skill', 'inline', {
      mcpServers: [
        'local',
        { name: 'own', transport: 'stdio', command: 'node', args: ['./o.mjs'] },
      ],
    });
    expect((await store.get('skill', 'inline')).mcpServers).toEqual([
      'local',
      expect.objectContaining({ name: 'own', command: 'node', args: [join(dir, 'o.mjs')] }),
    ]);
    // The helper itself, for configs that never were a file.
    expect(
      resolveServerPaths({ transport: 'stdio', command: '../x', args: [], trusted: false }, '/p/q'),
    ).toMatchObject({ command: '/p/x' });
  });

  it('resolves a bare argument that names a file of the project; folders and the rest stay as written', async () => {
    await mkdir(join(dir, 'node_modules', 'pkg'), { recursive: true });
    await writeFile(join(dir, 'node_modules', 'pkg', 'index.js'), '');
    await mkdir(join(dir, 'src'));
    const config = resolveServerPaths(
      {
        transport: 'stdio',
        command: 'node',
        args: ['node_modules/pkg/index.js', '.', 'src', '--flag', 'missing/x.js'],
        trusted: false,
      },
      dir,
    );
    expect(config).toMatchObject({
      command: 'node',
      args: [join(dir, 'node_modules/pkg/index.js'), '.', 'src', '--flag', 'missing/x.js'],
    });
    // The one that names no file is what a failed start's message points at, with the folder.
    expect(missingProjectFiles(config, dir)).toEqual(['missing/x.js']);
  });

  it("writes .agents/.gitignore for run state when it creates the folder, never over a user's", async () => {
    await store.put('actor', 'a', { skills: ['s'] });
    const ignore = join(dir, '.agents', '.gitignore');
    expect(await readFile(ignore, 'utf8')).toBe(WORKSPACE_GITIGNORE);
    for (const pattern of ['/checkpoints.sqlite*', '/audit.jsonl', '/sandboxes/', '/pins.json'])
      expect(WORKSPACE_GITIGNORE.split('\n')).toContain(pattern);

    // The user edits it: later writes leave it alone.
    await writeFile(ignore, 'mine\n');
    await store.put('actor', 'b', { skills: ['s'] });
    expect(await readFile(ignore, 'utf8')).toBe('mine\n');
    // A user who deleted it is not second-guessed either: the folder exists.
    await rm(ignore);
    await store.put('actor', 'c', { skills: ['s'] });
    await expect(stat(ignore)).rejects.toMatchObject({ code: 'ENOENT' });

    // A workspace folder that existed before the store wrote to it gets none.
    const other = join(dir, 'other', '.agents');
    await mkdir(other, { recursive: true });
    await createWorkspaceStore(other).put('actor', 'a', { skills: ['s'] });
    expect(await readdir(other)).toEqual(['actors']);
  });
});
