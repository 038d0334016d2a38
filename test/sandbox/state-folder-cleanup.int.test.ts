import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';

describe('a sandbox placed in the state folder', () => {
  let scratch: string;
  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('leaves no empty folders there once removed (a script that cleans up leaves nothing)', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'agents-state-cleanup-'));
    const project = join(scratch, 'project');
    const stateDir = join(scratch, 'state');
    await mkdir(project);
    await writeFile(join(project, 'a.txt'), 'a\n');
    const first = await createSandbox({ source: project, stateDir });
    const second = await createSandbox({ source: project, stateDir });
    // Precondition: both live under the project's folder of the state folder.
    const projectFolder = dirname(dirname(first.container));
    expect(dirname(dirname(second.container))).toBe(projectFolder);
    expect(projectFolder.startsWith(join(stateDir, 'projects'))).toBe(true);

    await first.close();
    // The other sandbox still uses the folders: they stay.
    expect(existsSync(second.root)).toBe(true);
    await second.close();
    expect(existsSync(projectFolder)).toBe(false);
    expect(readdirSync(stateDir)).toEqual([]);
  });
});
