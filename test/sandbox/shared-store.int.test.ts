import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySaver, emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withSnapshotBarrier } from '../../src/actors/shared-thread.js';
import { AgentsError } from '../../src/errors.js';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { ThreadReplica } from '../../src/sandbox/git/shared-store.js';
import type { SnapshotStore } from '../../src/sandbox/backend.js';
import { treeHash } from '../helpers/tree-hash.js';
import { git, makeRepo } from './helpers.js';

describe('shared snapshot store (ThreadReplica)', () => {
  let dir: string;
  let repo: string;
  let bare: string;
  const open: LocalSandbox[] = [];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-shared-store-')));
    repo = join(dir, 'repo');
    await mkdir(repo);
    makeRepo(repo, { 'README.md': 'hello\n', 'src/a.txt': 'a\n' });
    bare = join(dir, 'store.git');
    git(dir, 'init', '-q', '--bare', bare);
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((sandbox) => sandbox.close().catch(() => undefined)));
    await rm(dir, { recursive: true, force: true });
  });

  async function sandbox(seed?: ThreadReplica): Promise<LocalSandbox> {
    const made = await createSandbox({
      source: repo,
      baseDir: join(dir, 'boxes'),
      ...(seed === undefined
        ? {}
        : { seed: (store: SnapshotStore, signal?: AbortSignal) => seed.fetchInto(store, signal) }),
    });
    open.push(made);
    return made;
  }

  it('pushes every snapshot under the thread namespace, and a fresh sandbox rebuilt from it has the exact tree', async () => {
    const first = await sandbox();
    const writer = new ThreadReplica({ remote: bare, actor: 'bot', threadId: 't/1 odd' });
    await writer.attach(first);
    await writeFile(join(first.root, 'new.txt'), 'new\n');
    const one = await first.snapshot('one');
    await rm(join(first.root, 'src', 'a.txt'));
    const two = await first.snapshot('two');
    await writer.flush();
    // One ref for the thread (a hashed segment for an id that is not a ref name), no branches.
    const refs = git(bare, 'for-each-ref', '--format=%(refname)').trim().split('\n');
    expect(refs).toEqual([writer.namespace + '/keep']);
    expect(writer.namespace).toMatch(/^refs\/agents\/threads\/bot\/thread-[0-9a-f]{24}$/);
    for (const sha of [first.base, one.sha, two.sha]) {
      // Reachable from the thread's ref, so the store's gc keeps it.
      expect(git(bare, 'rev-list', writer.namespace + '/keep')).toContain(sha);
    }

    const reader = new ThreadReplica({ remote: bare, actor: 'bot', threadId: 't/1 odd' });
    const rebuilt = await sandbox(reader);
    expect(rebuilt.base).toBe(first.base);
    expect(rebuilt.head).toBe(two.sha);
    expect(await treeHash(rebuilt.root)).toBe(await treeHash(first.root));
    // And it can go back to any snapshot of the thread.
    await rebuilt.restore(one.sha);
    expect(await treeHash(rebuilt.root)).not.toBe(await treeHash(first.root));
  });

  it('holds a checkpoint write until its snapshot is in the store, and fails it when the push fails', async () => {
    const work = await sandbox();
    const broken = new ThreadReplica({
      remote: join(dir, 'no-such-store.git'),
      actor: 'bot',
      threadId: 't2',
    });
    // Attaching fetches: an unreachable store fails loudly, naming it.
    await expect(broken.attach(work)).rejects.toThrow(/shared snapshot store .*no-such-store\.git/);

    const replica = new ThreadReplica({ remote: bare, actor: 'bot', threadId: 't2' });
    await replica.attach(work);
    await replica.flush();
    const saver = new MemorySaver();
    const guarded = withSnapshotBarrier(saver, () => replica.flush());
    expect(guarded).toBeInstanceOf(MemorySaver);
    // The store goes away after the snapshot was taken: the checkpoint naming it is refused.
    await writeFile(join(work.root, 'x.txt'), 'x\n');
    await rm(bare, { recursive: true, force: true });
    await work.snapshot('x');
    const config = { configurable: { thread_id: 't2', checkpoint_ns: '' } };
    await expect(
      guarded.put(config, emptyCheckpoint(), { source: 'loop', step: 1, parents: {} }, {}),
    ).rejects.toSatisfy((error: unknown) => AgentsError.isInstance(error));
    expect(await saver.getTuple(config)).toBeUndefined();
    // Back: the queued snapshot goes in with the next write, which then succeeds.
    git(dir, 'init', '-q', '--bare', bare);
    await guarded.put(config, emptyCheckpoint(), { source: 'loop', step: 1, parents: {} }, {});
    expect(await saver.getTuple(config)).toBeDefined();
    expect(git(bare, 'rev-list', replica.namespace + '/keep')).toContain(work.head);
  });

  it('refuses (never forces) a push when another worker moved the thread', async () => {
    const a = await sandbox();
    const first = new ThreadReplica({ remote: bare, actor: 'bot', threadId: 't3' });
    await first.attach(a);
    await first.flush();
    const b = await sandbox(new ThreadReplica({ remote: bare, actor: 'bot', threadId: 't3' }));
    const second = new ThreadReplica({ remote: bare, actor: 'bot', threadId: 't3' });
    await second.attach(b);
    await writeFile(join(b.root, 'b.txt'), 'b\n');
    await b.snapshot('b');
    await second.flush();
    const moved = git(bare, 'rev-parse', second.namespace + '/keep').trim();
    await writeFile(join(a.root, 'a.txt'), 'a\n');
    await a.snapshot('a');
    await expect(first.flush()).rejects.toThrow(/moved by another worker/);
    expect(git(bare, 'rev-parse', first.namespace + '/keep').trim()).toBe(moved);
  });
});
