import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import { STATE_DIR_ENV } from '../../src/sandbox/state-dir.js';
import {
  FAILED_START_CASES,
  failingProject,
  listTree,
  markedProcesses,
} from '../helpers/failed-start.js';

describe('a failed start of createActor leaves nothing behind (issue 13 item 5)', () => {
  let stateDir: string;
  let previous: string | undefined;
  const projects: string[] = [];
  beforeEach(async () => {
    // Per test, so "the same before and after" is about this test's start only.
    stateDir = await mkdtemp(join(tmpdir(), 'agents-failed-start-state-'));
    previous = process.env[STATE_DIR_ENV];
    process.env[STATE_DIR_ENV] = stateDir;
  });
  afterEach(async () => {
    if (previous === undefined) delete process.env[STATE_DIR_ENV];
    else process.env[STATE_DIR_ENV] = previous;
    await rm(stateDir, { recursive: true, force: true });
    for (const dir of projects.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  for (const failure of FAILED_START_CASES) {
    for (const threadId of [undefined, 'named-thread']) {
      it(`${failure.kind}${threadId === undefined ? '' : ', on a new thread'}: no sandbox, thread record, lock or server process`, async () => {
        const mark = randomUUID();
        const { dir, store } = await failingProject(failure, mark);
        projects.push(dir);
        const before = await listTree(stateDir);
        const actor = await createActor({
          name: 'bot',
          workspace: store,
          ...(threadId === undefined ? {} : { threadId }),
          onWarning: () => undefined,
        });
        await expect(actor.activate({ checkModel: true })).rejects.toMatchObject({
          code: failure.code,
        });
        expect(actor.active).toBe(false);
        expect(await listTree(stateDir)).toEqual(before);
        expect(await markedProcesses(mark)).toEqual([]);
        // Nothing half-held either: the same actor starts once the cause is gone.
        await actor.deactivate();
      });
    }
  }

  it('keeps a reopened thread’s sandbox when a later start fails (it holds the thread’s history)', async () => {
    const mark = randomUUID();
    const { dir, store } = await failingProject(FAILED_START_CASES[0]!, mark);
    projects.push(dir);
    await store.put(
      'actor',
      'bot',
      {
        skills: ['notes'],
        model: 'scripted:script.yaml',
        policy: { mode: 'auto' },
        checkpointer: { type: 'sqlite', path: '.agents/checkpoints.sqlite' },
      },
      { overwrite: true },
    );
    const first = await createActor({ name: 'bot', workspace: store, threadId: 't-1' });
    await first.activate({ checkModel: true });
    await first.deactivate();
    const kept = await listTree(stateDir);
    expect(kept.some((path) => path.endsWith('thread.json'))).toBe(true);
    await store.put(
      'server',
      'notes',
      { transport: 'stdio', command: join(dir, 'gone'), args: [] },
      { overwrite: true },
    );
    const second = await createActor({ name: 'bot', workspace: store, threadId: 't-1' });
    await expect(second.activate()).rejects.toMatchObject({ code: 'SERVER_START_FAILED' });
    // The thread's sandbox stays, and its run lock is released.
    expect((await listTree(stateDir)).filter((path) => !path.endsWith('lock'))).toEqual(
      kept.filter((path) => !path.endsWith('lock')),
    );
    // The lock is free: with the server back, the thread runs again in its kept sandbox.
    await store.put('skill', 'notes', { tools: ['read_file'] }, { overwrite: true });
    const third = await createActor({ name: 'bot', workspace: store, threadId: 't-1' });
    await third.activate();
    await third.deactivate();
  });
});
