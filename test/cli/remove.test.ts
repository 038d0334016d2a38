import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents } from './helpers.js';

describe('agents KIND remove refuses while other records use the record', () => {
  let dir: string;
  const file = (folder: string, name: string) => join(dir, '.agents', folder, `${name}.yaml`);
  const exists = (path: string) =>
    stat(path).then(
      () => true,
      () => false,
    );
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-remove-'));
    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'fs', { transport: 'stdio', command: 'node', args: ['server.js'] });
    await store.put('tool', 'fs-write', { id: 'fs.write', server: 'fs', tool: 'write_file' });
    await store.put('skill', 'files', { mcpServers: ['fs'], tools: ['fs.write'] });
    await store.put('actor', 'coder', { skills: ['files'], model: 'scripted:x.yaml' });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names the users, keeps the file, and removes it with --force', async () => {
    const refused = await agents(dir, 'server', 'remove', 'fs');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('server "fs" is used by skill "files", tool "fs.write"');
    expect(refused.stderr).toContain('--force');
    expect(await exists(file('servers', 'fs'))).toBe(true);

    expect((await agents(dir, 'skill', 'remove', 'files')).stderr).toContain(
      'used by actor "coder"',
    );
    expect((await agents(dir, 'tool', 'remove', 'fs-write')).stderr).toContain(
      'used by skill "files"',
    );

    const forced = await agents(dir, 'server', 'remove', 'fs', '--force');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('Removed server "fs".');
    expect(await exists(file('servers', 'fs'))).toBe(false);
  });

  it('removes from the top down without --force once nothing uses a record', async () => {
    for (const [kind, name, folder] of [
      ['actor', 'coder', 'actors'],
      ['skill', 'files', 'skills'],
      ['tool', 'fs-write', 'tools'],
      ['server', 'fs', 'servers'],
    ] as const) {
      const run = await agents(dir, kind, 'remove', name);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(await exists(file(folder, name))).toBe(false);
    }
    const missing = await agents(dir, 'skill', 'remove', 'files');
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('No skill named "files"');
  });
});
