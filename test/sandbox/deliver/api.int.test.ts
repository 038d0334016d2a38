import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  applySandbox,
  commitSandbox,
  createSandbox,
  diffSandbox,
  undoSandboxApply,
  SANDBOX_BACKENDS,
  type RunSandbox,
} from '../../../src/entries/sandbox.js';
import { makeProjectRepo } from '../../cli/helpers.js';
import { removeProject, userGit } from './helpers.js';

describe('delivery from code (diffSandbox, applySandbox, undoSandboxApply, commitSandbox)', () => {
  let dir: string | undefined;
  let sandbox: RunSandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    if (dir !== undefined) await removeProject({ dir, workspace: join(dir, 'none') });
  });

  it('reviews, applies, undoes and branches the work of a sandbox made by createSandbox', async () => {
    dir = await makeProjectRepo('agents-deliver-api-');
    sandbox = await createSandbox({ source: dir });
    await writeFile(join(sandbox.root, 'README.md'), 'hello\nfrom the sandbox\n');
    await sandbox.snapshot('edit');

    const diff = await diffSandbox(sandbox);
    expect(diff.files).toHaveLength(1);
    expect(diff.files[0]).toMatchObject({
      path: 'README.md',
      status: 'M',
      additions: 1,
      deletions: 0,
    });
    expect(diff.files[0]!.hunks[0]!.lines).toEqual([
      { kind: 'context', text: 'hello' },
      { kind: 'add', text: 'from the sandbox' },
    ]);

    const dry = await applySandbox(sandbox, { dryRun: true });
    expect(dry).toMatchObject({
      applied: false,
      changes: [{ path: 'README.md', action: 'write' }],
    });
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('hello\n');
    const applied = await applySandbox(sandbox);
    expect(applied.applied).toBe(true);
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('hello\nfrom the sandbox\n');
    const undone = await undoSandboxApply(sandbox);
    expect(undone.restored).toEqual(['README.md']);
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('hello\n');

    const made = await commitSandbox(sandbox, { branch: 'from-code' });
    expect(userGit(dir, 'show', 'from-code:README.md')).toBe('hello\nfrom the sandbox\n');
    expect(made.parent).toBe(userGit(dir, 'rev-parse', 'HEAD').trim());
  });

  it('applies and undoes the work of a memory-backend sandbox through its snapshot store; a branch commit is refused with a clear error', async () => {
    dir = await makeProjectRepo('agents-deliver-memory-');
    sandbox = await SANDBOX_BACKENDS.memory.create({ source: dir });
    await writeFile(join(sandbox.root, 'README.md'), 'hello\nfrom memory\n');
    await writeFile(join(sandbox.root, 'new.txt'), 'new\n');
    await sandbox.snapshot('edit');

    const applied = await applySandbox(sandbox);
    expect(applied.applied).toBe(true);
    expect(applied.changes.map((change) => change.path).sort()).toEqual(['README.md', 'new.txt']);
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('hello\nfrom memory\n');
    expect(await readFile(join(dir, 'new.txt'), 'utf8')).toBe('new\n');
    const undone = await undoSandboxApply(sandbox);
    expect([...undone.restored].sort()).toEqual(['README.md', 'new.txt']);
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('hello\n');

    await expect(commitSandbox(sandbox, { branch: 'from-memory' })).rejects.toMatchObject({
      code: 'SANDBOX_FAILED',
      message: expect.stringContaining('use apply to take its work instead'),
    });
  });
});
