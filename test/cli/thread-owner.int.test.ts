import { access, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findThreadSandboxes, threadSandboxDir } from '../../src/actors/thread-sandbox.js';
import {
  addFixtureFilesSkill,
  addScriptedActors,
  agents,
  agentsProcess,
  makeProjectRepo,
} from './helpers.js';

const THREAD = 'shared-1';

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

describe('one thread, one actor', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await makeProjectRepo('agents-thread-owner-');
    await addFixtureFilesSkill(dir, { tools: 'basic' });
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }]',
        '- content: done',
      ],
      { mode: 'auto', names: ['bot', 'other'] },
    );
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'refuses a second actor on a thread at start, leaving the first actor’s thread usable',
    { timeout: 180_000 },
    async () => {
      const first = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'go',
        '--thread',
        THREAD,
      ]);
      expect(first.code, first.stderr).toBe(0);
      const before = await agents(dir, 'checkpoints', '--thread', THREAD, '--json');
      expect(before.code, before.stderr).toBe(0);

      const second = await agents(
        dir,
        'actor',
        'run',
        'other',
        '--input',
        'go',
        '--thread',
        THREAD,
      );
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(`Thread "${THREAD}" belongs to actor "bot"`);
      // Nothing of the second actor was made, and the thread still lists and rolls back.
      expect(await exists(threadSandboxDir(join(dir, '.agents'), 'other', THREAD))).toBe(false);
      expect(
        (await findThreadSandboxes(join(dir, '.agents'), THREAD)).map((l) => l.record.actor),
      ).toEqual(['bot']);
      const after = await agents(dir, 'checkpoints', '--thread', THREAD, '--json');
      expect(after.code, after.stderr).toBe(0);
      expect(after.stdout).toBe(before.stdout);
      const diff = await agents(dir, 'sandbox', 'diff', '--thread', THREAD);
      expect(diff.code, diff.stderr).toBe(0);
      expect(diff.stdout).toBe('A a.txt\n');
      // The owner itself goes on running the thread.
      const again = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'more',
        '--thread',
        THREAD,
      ]);
      expect(again.code, again.stderr).toBe(0);
      expect(await exists(threadSandboxDir(join(dir, '.agents'), 'bot', THREAD))).toBe(true);
    },
  );
});
