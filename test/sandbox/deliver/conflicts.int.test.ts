import { access, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, editThread, makeProject, removeProject, type Project } from './helpers.js';

const T = 'c1';
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('conflicts a person can resolve (#26)', () => {
  let project: Project | undefined;
  afterEach(async () => {
    await removeProject(project);
    project = undefined;
  });

  it(
    'every conflict kind: next steps on refusal, the agent`s version beside yours with markers, a backup on undo --force',
    { timeout: 240_000 },
    async () => {
      const p = (project = await makeProject('agents-conflicts-', {
        'img.bin': Buffer.from([0, 1, 2]),
        'gone-yours.txt': 'base\n',
        'gone-agent.txt': 'base\n',
      }));
      await editThread(p, T, {
        'img.bin': Buffer.from([0, 9, 9]),
        'gone-yours.txt': 'agent edit\n',
        'gone-agent.txt': null,
        'both.txt': 'agent added\n',
      });
      await writeFile(join(p.dir, 'img.bin'), Buffer.from([0, 7, 7]));
      await rm(join(p.dir, 'gone-yours.txt'));
      await writeFile(join(p.dir, 'gone-agent.txt'), 'your edit\n');
      await writeFile(join(p.dir, 'both.txt'), 'you added\n');

      const dry = await cli(p, 'sandbox', 'apply', '--thread', T, '--dry-run');
      expect(dry.code).toBe(7);
      expect(dry.stdout).toContain('Dry run, nothing written: 0 file(s) would be written');
      expect(dry.stdout).toContain('the conflicts above would stop it');
      expect(dry.stdout).not.toContain('Conflicts, nothing written');

      const refused = await cli(p, 'sandbox', 'apply', '--thread', T);
      expect(refused.code).toBe(7);
      expect(refused.stdout).toContain('Conflicts, nothing written (4):');
      expect(refused.stdout).toContain('Next steps');
      expect(refused.stdout).toContain('--conflicts markers');
      expect(refused.stdout).toContain('diff --thread c1 --patch PATH');

      const markers = await cli(p, 'sandbox', 'apply', '--thread', T, '--conflicts', 'markers');
      expect(markers.code).toBe(7);
      expect(markers.stdout).toContain(
        "img.bin: a binary file changed on both sides; the sandbox's version is in img.bin.agent",
      );
      expect(await readFile(join(p.dir, 'img.bin.agent'))).toEqual(Buffer.from([0, 9, 9]));
      expect(await readFile(join(p.dir, 'img.bin'))).toEqual(Buffer.from([0, 7, 7]));
      expect(await readFile(join(p.dir, 'gone-yours.txt.agent'), 'utf8')).toBe('agent edit\n');
      expect(await exists(join(p.dir, 'gone-yours.txt'))).toBe(false);
      expect(await readFile(join(p.dir, 'both.txt.agent'), 'utf8')).toBe('agent added\n');
      expect(await readFile(join(p.dir, 'both.txt'), 'utf8')).toBe('you added\n');
      expect(markers.stdout).toMatch(
        /gone-agent\.txt: you changed it; the sandbox deleted it; keep your version or delete/,
      );
      expect(await readFile(join(p.dir, 'gone-agent.txt'), 'utf8')).toBe('your edit\n');
      expect(markers.stdout).toContain('compare each FILE.agent with FILE');

      // The user works on a .agent file, then forces the undo: the edit is kept in a backup.
      await writeFile(join(p.dir, 'both.txt.agent'), 'merged by hand\n');
      const blocked = await cli(p, 'sandbox', 'apply', '--thread', T, '--undo');
      expect(blocked.code).toBe(7);
      const forced = await cli(p, 'sandbox', 'apply', '--thread', T, '--undo', '--force');
      expect(forced.code, forced.stderr).toBe(0);
      const saved = /were saved first in (\S+)/.exec(forced.stdout)?.[1];
      expect(saved, forced.stdout).toBeDefined();
      expect(await readFile(join(saved!, 'both.txt.agent'), 'utf8')).toBe('merged by hand\n');
      expect(await exists(join(p.dir, 'both.txt.agent'))).toBe(false);
    },
  );
});
