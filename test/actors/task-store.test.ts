import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { openActorStore } from '../../src/actors/task-store.js';
import { checkpointBackends } from '../../src/checkpoint/backends.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('actor task store (issue 38 item 11)', () => {
  it('keeps a noted task in a SQLite file beside the checkpoints, across processes, per project and actor', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agents-task-store-'));
    dirs.push(dir);
    const location = {
      backend: checkpointBackends.sqlite,
      settings: { type: 'sqlite', path: 'checkpoints.sqlite' },
      projectDir: dir,
    };
    const first = await openActorStore(location, { project: 'p1', actor: 'a' });
    await first.store.put(['agents', 'mcp-tasks', 't1'], 'call-1', { taskId: 'task-7' });
    await first.close();
    expect(existsSync(join(dir, 'checkpoints.sqlite.tasks'))).toBe(true);

    // A new opening (as `--continue` in a new process) finds the note under the same scope only.
    const again = await openActorStore(location, { project: 'p1', actor: 'a' });
    const other = await openActorStore(location, { project: 'p2', actor: 'a' });
    try {
      const item = await again.store.get(['agents', 'mcp-tasks', 't1'], 'call-1');
      expect(item?.value).toEqual({ taskId: 'task-7' });
      expect(item?.namespace).toEqual(['agents', 'mcp-tasks', 't1']);
      expect(await other.store.get(['agents', 'mcp-tasks', 't1'], 'call-1')).toBeNull();
    } finally {
      await again.close();
      await other.close();
    }
  });

  it('keeps the store in memory for a caller-made saver (no backend)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agents-task-store-'));
    dirs.push(dir);
    const location = { backend: undefined, settings: { type: 'sqlite' }, projectDir: dir };
    const first = await openActorStore(location, { project: 'p1', actor: 'a' });
    await first.store.put(['agents', 'mcp-tasks', 't1'], 'call-1', { taskId: 'task-7' });
    await first.close();
    const again = await openActorStore(location, { project: 'p1', actor: 'a' });
    expect(await again.store.get(['agents', 'mcp-tasks', 't1'], 'call-1')).toBeNull();
    expect(existsSync(join(dir, '.agents'))).toBe(false);
  });
});
