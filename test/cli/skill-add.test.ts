import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agents } from './helpers.js';

const GIT_HELPER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'skills', 'git-helper');

// A skill of built-in tools and Agent Skills starts no server, so this runs in process.
describe('agents skill add --agent-skill', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-skill-add-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a bare name from .agents/skills/ and a path from the project, as the README says', async () => {
    await cp(GIT_HELPER, join(dir, '.agents', 'skills', 'git-helper'), { recursive: true });
    const bare = await agents(
      dir,
      ...['skill', 'add', 'review', '--tool', 'read_file', '--agent-skill', 'git-helper'],
    );
    expect(bare.stderr).toBe('');
    expect(bare.code).toBe(0);
    expect(await readFile(join(dir, '.agents', 'skills', 'review.yaml'), 'utf8')).toContain(
      'agentSkills:\n  - git-helper\n',
    );
    const shown = JSON.parse((await agents(dir, 'skill', 'show', 'review', '--json')).stdout);
    expect(shown.agentSkills).toEqual([
      expect.objectContaining({
        name: 'git-helper',
        dir: join(dir, '.agents', 'skills', 'git-helper'),
      }),
    ]);

    // `skills/git-helper` is a path, so it means <project>/skills/git-helper, which is absent:
    // the skill is refused (not stored with a warning), naming the folder it looked for.
    const path = await agents(
      dir,
      ...['skill', 'add', 'other', '--tool', 'read_file', '--agent-skill', 'skills/git-helper'],
    );
    expect(path.code).toBe(4);
    expect(path.stderr).toContain(
      `Skill "other" lists Agent Skill "skills/git-helper" in agentSkills, but the folder ${join(dir, 'skills', 'git-helper')} does not exist`,
    );
    await expect(readFile(join(dir, '.agents', 'skills', 'other.yaml'), 'utf8')).rejects.toThrow(
      /ENOENT/,
    );
    // A bare name that is missing says where bare names live.
    const bareMissing = await agents(
      dir,
      ...['skill', 'add', 'x', '--tool', 'read_file', '--agent-skill', 'missing'],
    );
    expect(bareMissing.code).toBe(4);
    expect(bareMissing.stderr).toContain(
      `create it with a SKILL.md (bare names are folders in ${join(dir, '.agents', 'skills')})`,
    );
  });
});
