import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { projectIdOf } from '../../src/actors/project-id.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'agents-project-id-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function folder(name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, '.agents'), { recursive: true });
  return dir;
}

describe('projectIdOf', () => {
  it('reads .agents/project-id first', async () => {
    const dir = await folder('named');
    await writeFile(join(dir, '.agents', 'project-id'), 'shop-backend\nignored\n');
    expect(await projectIdOf(dir)).toBe('shop-backend');
  });

  it('refuses a .agents/project-id that is not a plain name, naming the file', async () => {
    const dir = await folder('slash');
    await writeFile(join(dir, '.agents', 'project-id'), 'a/b\n');
    const error = await projectIdOf(dir).catch((caught: unknown) => caught);
    expect(AgentsError.hasCode(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toContain(join(dir, '.agents', 'project-id'));
  });

  it("uses the repository's root commit, the same in every clone and subfolder", async () => {
    const dir = await folder('repo');
    const git = (cwd: string, ...args: string[]): string =>
      execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe' }).trim();
    git(dir, 'init', '-q');
    await writeFile(join(dir, 'a.txt'), 'a');
    git(dir, 'add', 'a.txt');
    git(dir, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'root');
    const rootCommit = git(dir, 'rev-parse', 'HEAD');
    const clone = join(root, 'clone');
    git(root, 'clone', '-q', dir, clone);
    expect(await projectIdOf(dir)).toBe(`git-${rootCommit}`);
    expect(await projectIdOf(clone)).toBe(`git-${rootCommit}`);
  });

  it('falls back to a hash of the folder outside git', async () => {
    const one = await folder('plain-one');
    const two = await folder('plain-two');
    const [first, second] = [await projectIdOf(one), await projectIdOf(two)];
    expect(first).toMatch(/^path-[0-9a-f]{16}$/);
    expect(second).toMatch(/^path-[0-9a-f]{16}$/);
    expect(first).not.toBe(second);
  });
});
