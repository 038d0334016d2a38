import { execFileSync } from 'node:child_process';
import { access, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, editThread, makeProject, removeProject, userGit, type Project } from './helpers.js';

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
    'every conflict kind: next steps on refusal, the agent`s version beside yours and unmerged in the index with markers, git mergetool resolves each, undo --force keeps a backup and puts the index back',
    { timeout: 240_000 },
    async () => {
      const p = (project = await makeProject('agents-conflicts-', {
        'img.bin': Buffer.from([0, 1, 2]),
        'gone-yours.txt': 'base\n',
        'gone-agent.txt': 'base\n',
        'text.txt': 'base line\n',
      }));
      await editThread(p, T, {
        'img.bin': Buffer.from([0, 9, 9]),
        'gone-yours.txt': 'agent edit\n',
        'gone-agent.txt': null,
        'both.txt': 'agent added\n',
        'text.txt': 'agent line\n',
      });
      await writeFile(join(p.dir, 'img.bin'), Buffer.from([0, 7, 7]));
      await rm(join(p.dir, 'gone-yours.txt'));
      await writeFile(join(p.dir, 'gone-agent.txt'), 'your edit\n');
      await writeFile(join(p.dir, 'both.txt'), 'you added\n');
      await writeFile(join(p.dir, 'text.txt'), 'your line\n');

      const dry = await cli(p, 'sandbox', 'apply', '--thread', T, '--dry-run');
      expect(dry.code).toBe(7);
      expect(dry.stdout).toContain('Dry run, nothing written: 0 file(s) would be written');
      expect(dry.stdout).toContain('the conflicts above would stop it');
      expect(dry.stdout).not.toContain('Conflicts, nothing written');

      const refused = await cli(p, 'sandbox', 'apply', '--thread', T);
      expect(refused.code).toBe(7);
      expect(refused.stdout).toContain('Conflicts, nothing written (5):');
      expect(refused.stdout).toContain('Next steps');
      expect(refused.stdout).toContain('--conflicts markers');
      expect(refused.stdout).toContain('diff --thread c1 --patch PATH');

      const indexBefore = userGit(p.dir, 'ls-files', '-s');
      const markers = await cli(p, 'sandbox', 'apply', '--thread', T, '--conflicts', 'markers');
      expect(markers.code).toBe(7);
      expect(markers.stdout).toContain(
        "img.bin: a binary file changed on both sides; the sandbox's version is in img.bin.agent",
      );
      expect(await readFile(join(p.dir, 'img.bin.agent'))).toEqual(Buffer.from([0, 9, 9]));
      expect(await readFile(join(p.dir, 'img.bin'))).toEqual(Buffer.from([0, 7, 7]));
      // Deleted by you, changed by the sandbox: its version back in the file (as git leaves it).
      expect(await readFile(join(p.dir, 'gone-yours.txt'), 'utf8')).toBe('agent edit\n');
      expect(await readFile(join(p.dir, 'both.txt.agent'), 'utf8')).toBe('agent added\n');
      expect(await readFile(join(p.dir, 'both.txt'), 'utf8')).toBe('you added\n');
      expect(markers.stdout).toMatch(/gone-agent\.txt: you changed it; the sandbox deleted it/);
      expect(await readFile(join(p.dir, 'gone-agent.txt'), 'utf8')).toBe('your edit\n');
      expect(await readFile(join(p.dir, 'text.txt'), 'utf8')).toContain('>>>>>>> sandbox');
      expect(markers.stdout).toContain('git mergetool');
      // Each listed change keeps a space between its action and path, the longest action too.
      expect(markers.stdout).toMatch(/^ {2}unmerged gone-yours\.txt$/m);

      // Every kind is unmerged in the index: git status sees it, git mergetool resolves it.
      const status = userGit(p.dir, 'status', '--porcelain');
      expect(status).toContain('UU img.bin');
      expect(status).toContain('UU text.txt');
      expect(status).toContain('AA both.txt');
      expect(status).toContain('DU gone-yours.txt');
      expect(status).toContain('UD gone-agent.txt');
      // The person's own mergetool run (a scripted tool taking the sandbox's side; the
      // modify/delete questions answered on stdin), as they would run it.
      const mergetool = (input: string, ...paths: string[]) =>
        execFileSync(
          'git',
          [
            '-c',
            'mergetool.take.cmd=cp "$REMOTE" "$MERGED"',
            '-c',
            'mergetool.take.trustExitCode=true',
            '-c',
            'mergetool.keepBackup=false',
            'mergetool',
            '--tool=take',
            '--no-prompt',
            '--',
            ...paths,
          ],
          { cwd: p.dir, input, encoding: 'utf8', stdio: 'pipe' },
        );
      mergetool('', 'both.txt', 'img.bin', 'text.txt');
      mergetool('m\n', 'gone-yours.txt');
      mergetool('d\n', 'gone-agent.txt');
      expect(userGit(p.dir, 'ls-files', '-u')).toBe('');
      expect(await readFile(join(p.dir, 'both.txt'), 'utf8')).toBe('agent added\n');
      expect(await readFile(join(p.dir, 'img.bin'))).toEqual(Buffer.from([0, 9, 9]));
      expect(await readFile(join(p.dir, 'text.txt'), 'utf8')).toBe('agent line\n');
      expect(userGit(p.dir, 'show', ':gone-yours.txt')).toBe('agent edit\n');
      expect(await exists(join(p.dir, 'gone-agent.txt'))).toBe(false);

      // The user works on a .agent file. The undo now would lose what mergetool wrote over
      // the user's own versions (both.txt, img.bin, text.txt; gone-agent.txt deleted): refused,
      // naming each path.
      await writeFile(join(p.dir, 'both.txt.agent'), 'merged by hand\n');
      const blocked = await cli(p, 'sandbox', 'apply', '--thread', T, '--undo');
      expect(blocked.code).toBe(7);
      const refusal = blocked.stderr + blocked.stdout;
      const named = /Not undoing apply \S+: (.*) changed after it was applied/.exec(refusal)?.[1];
      expect(named?.split(', ').sort(), refusal).toEqual(
        ['both.txt', 'both.txt.agent', 'gone-agent.txt', 'img.bin', 'text.txt'].sort(),
      );
      expect(blocked.stderr + blocked.stdout).toContain('--force');
      expect(await readFile(join(p.dir, 'both.txt'), 'utf8')).toBe('agent added\n');
      // Forced: what is there now is saved first, then every file is exactly what the user had
      // before the apply, in all five kinds.
      const forced = await cli(p, 'sandbox', 'apply', '--thread', T, '--undo', '--force');
      expect(forced.code, forced.stderr).toBe(0);
      const saved = /were saved first in (\S+)/.exec(forced.stdout)?.[1];
      expect(saved, forced.stdout).toBeDefined();
      expect(await readFile(join(saved!, 'both.txt.agent'), 'utf8')).toBe('merged by hand\n');
      expect(await readFile(join(saved!, 'both.txt'), 'utf8')).toBe('agent added\n');
      expect(await readFile(join(saved!, 'img.bin'))).toEqual(Buffer.from([0, 9, 9]));
      expect(await readFile(join(saved!, 'text.txt'), 'utf8')).toBe('agent line\n');
      expect(await exists(join(p.dir, 'both.txt.agent'))).toBe(false);
      expect(await readFile(join(p.dir, 'both.txt'), 'utf8')).toBe('you added\n');
      expect(await readFile(join(p.dir, 'img.bin'))).toEqual(Buffer.from([0, 7, 7]));
      expect(await readFile(join(p.dir, 'text.txt'), 'utf8')).toBe('your line\n');
      expect(await readFile(join(p.dir, 'gone-agent.txt'), 'utf8')).toBe('your edit\n');
      expect(await exists(join(p.dir, 'gone-yours.txt'))).toBe(false);
      // The undo put the index entries back too: as before the apply, nothing unmerged.
      expect(userGit(p.dir, 'ls-files', '-s')).toBe(indexBefore);
    },
  );
});
