import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { settleKnownTools } from '../../src/policy/known-tools.js';
import { createMemoryPinStore } from '../../src/policy/pins.js';

describe('settleKnownTools (newTools across restarts)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'known-tools-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('keeps a tool that appeared in an earlier run "new" until it is approved', async () => {
    const pins = createMemoryPinStore();
    const settle = (ids: string[]) =>
      settleKnownTools({ workspaceRoot: root, actor: 'a', ids, pins });

    // First activation: whatever is listed is the actor's starting set.
    expect([...(await settle(['mcp:s/read', 'mcp:s/write']))]).toEqual([]);
    // A tool that appeared at run time last time is listed at this activation: still new.
    expect([...(await settle(['mcp:s/read', 'mcp:s/write', 'mcp:s/extra']))]).toEqual([
      'mcp:s/extra',
    ]);
    expect([...(await settle(['mcp:s/read', 'mcp:s/extra']))]).toEqual(['mcp:s/extra']);
    // Approved (pinned): known from then on, and it stays known.
    await pins.pin({ id: 'mcp:s/extra', fingerprint: 'f1' }, 'alice');
    expect([...(await settle(['mcp:s/read', 'mcp:s/extra']))]).toEqual([]);
    await pins.unpin('mcp:s/extra');
    expect([...(await settle(['mcp:s/read', 'mcp:s/extra']))]).toEqual([]);
    // A tool that left the list and comes back unapproved is new again.
    expect([...(await settle(['mcp:s/read', 'mcp:s/extra', 'mcp:s/write']))]).toEqual([
      'mcp:s/write',
    ]);
    const file = JSON.parse(await readFile(join(root, 'known-tools', 'a.json'), 'utf8')) as {
      ids: string[];
    };
    expect(file.ids).toEqual(['mcp:s/extra', 'mcp:s/read']);
  });

  it('keeps one list per actor, and a broken list starts over from what is listed', async () => {
    const pins = createMemoryPinStore();
    await settleKnownTools({ workspaceRoot: root, actor: 'a', ids: ['t1'], pins });
    expect([
      ...(await settleKnownTools({ workspaceRoot: root, actor: 'b', ids: ['t1', 't2'], pins })),
    ]).toEqual([]);
    expect([
      ...(await settleKnownTools({ workspaceRoot: root, actor: 'a', ids: ['t1', 't2'], pins })),
    ]).toEqual(['t2']);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(root, 'known-tools', 'a.json'), '{ not json');
    expect([
      ...(await settleKnownTools({ workspaceRoot: root, actor: 'a', ids: ['t1', 't2'], pins })),
    ]).toEqual([]);
  });
});
