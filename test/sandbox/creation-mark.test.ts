import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CREATION_MARK, prepareCreationDir } from '../../src/sandbox/creation-mark.js';

/** A pid that is not running: past the kernel's pid_max on Linux (4194304 at most). */
const GONE_PID = 99_999_999;

describe('prepareCreationDir (#38 item 10)', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-creation-mark-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const leaveHalfMade = async (mark: object): Promise<void> => {
    await mkdir(join(dir, 'run', 'git'), { recursive: true });
    await mkdir(join(dir, 'sb1'), { recursive: true });
    await writeFile(join(dir, 'sb1', 'a.txt'), 'A');
    await writeFile(join(dir, CREATION_MARK), JSON.stringify(mark));
  };

  it('removes a half-made creation of the same sandbox by a dead process, and marks its own', async () => {
    await leaveHalfMade({ kind: 'agents-sandbox-creating', id: 'sb1', pid: GONE_PID });
    await prepareCreationDir(dir, 'sb1');
    expect(await readdir(dir)).toEqual([CREATION_MARK]);
  });

  it('refuses a folder that is not ours, another sandbox id, a live creation, or a finished sandbox', async () => {
    await writeFile(join(dir, 'notes.txt'), 'user file');
    await expect(prepareCreationDir(dir, 'sb1')).rejects.toThrow(/not empty/);
    await rm(join(dir, 'notes.txt'));

    await leaveHalfMade({ kind: 'agents-sandbox-creating', id: 'other', pid: GONE_PID });
    await expect(prepareCreationDir(dir, 'sb1')).rejects.toThrow(/not empty/);

    await leaveHalfMade({ kind: 'agents-sandbox-creating', id: 'sb1', pid: process.ppid });
    await expect(prepareCreationDir(dir, 'sb1')).rejects.toThrow(/not empty/);

    await leaveHalfMade({ kind: 'agents-sandbox-creating', id: 'sb1', pid: GONE_PID });
    await writeFile(join(dir, 'run', 'sandbox.json'), '{}');
    await expect(prepareCreationDir(dir, 'sb1')).rejects.toThrow(/not empty/);

    await rm(join(dir, 'run', 'sandbox.json'));
    await writeFile(join(dir, 'extra.txt'), 'not made by creation');
    await expect(prepareCreationDir(dir, 'sb1')).rejects.toThrow(/not empty/);
    // Nothing was removed by a refusal.
    expect((await readdir(dir)).sort()).toEqual([CREATION_MARK, 'extra.txt', 'run', 'sb1']);
  });
});
