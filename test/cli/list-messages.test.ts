import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents } from './helpers.js';

describe('list and help texts say what is there', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-list-messages-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('tool list without tool resources does not print "(none)" while servers offer tools', async () => {
    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'fs', { transport: 'stdio', command: 'node', args: ['fs.js'] });
    await store.put('server', 'git', { transport: 'stdio', command: 'node', args: ['git.js'] });
    const listed = await agents(dir, 'tool', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain('(none)');
    expect(listed.stdout).toContain('(no tool resources: tools/*.yaml)');
    expect(listed.stdout).toContain(
      "Server tools (all usable through a skill's mcpServers): fs, git; see them with `agents server test NAME`.",
    );
  });

  it('uses "an" before a vowel in the remove summaries', async () => {
    const help = await agents(dir, '--help');
    expect(help.stdout).toMatch(/actor remove +Remove an actor/);
    expect(help.stdout).toMatch(/server remove +Remove a server/);
    expect(help.stdout).not.toContain('Remove a actor');
  });
});
