import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addFixtureFilesSkill, agents, makeProjectRepo } from '../../cli/helpers.js';
import { userGit } from './helpers.js';

/**
 * docs/delivery.md's walkthrough, run line by line as the page shows it (a real actor run with
 * the fixture file server and a scripted model), in a repository where the user keeps working.
 */
const DOC = join(import.meta.dirname, '..', '..', '..', 'docs', 'delivery.md');

/** The commands of the first ```sh block of the page, comments dropped. */
async function walkthrough(): Promise<string[]> {
  const text = await readFile(DOC, 'utf8');
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(text)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** Splits a shell line the way the page writes them (double quotes only, `> FILE` last). */
function words(line: string): { argv: string[]; out?: string } {
  const redirect = /\s>\s(\S+)$/.exec(line);
  const command = redirect === null ? line : line.slice(0, redirect.index);
  const argv = [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2]!);
  return { argv, ...(redirect === null ? {} : { out: redirect[1]! }) };
}

describe('the delivery walkthrough of docs/delivery.md (#26)', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it(
    'runs every command of the page: review, apply, undo, part of it with git apply, a branch per checkpoint and squashed',
    { timeout: 300_000 },
    async () => {
      const project = (dir = await makeProjectRepo('agents-walkthrough-'));
      await writeFile(join(project, '.gitignore'), '.agents/\nscript.yaml\n*.patch\n');
      await writeFile(join(project, 'app.txt'), 'one\ntwo\n');
      userGit(project, 'add', '-A');
      userGit(project, 'commit', '-q', '-m', 'project');
      const run = (...argv: string[]) => agents(project, ...argv);
      await addFixtureFilesSkill(project, { tools: 'basic' });
      await mkdir(join(project, '.agents', 'actors'), { recursive: true });
      await writeFile(
        join(project, '.agents', 'actors', 'coder.yaml'),
        'skills: [files]\nmodel: scripted:script.yaml\npolicy:\n  mode: auto\n',
      );
      // Two turns that write: two checkpoints, two commits on the branch.
      await writeFile(
        join(project, 'script.yaml'),
        [
          '- tool_calls: [{ name: write_file, args: { path: hello.txt, content: "hello\\n" } }]',
          '- tool_calls: [{ name: write_file, args: { path: notes.txt, content: "notes\\n" } }]',
          '- content: done',
          '',
        ].join('\n'),
      );

      const lines = await walkthrough();
      expect(lines.length).toBeGreaterThanOrEqual(9);
      const seen: string[] = [];
      for (const line of lines) {
        const { argv, out } = words(line);
        const key = argv.slice(1, 3).join(' ') + (argv.includes('--undo') ? ' undo' : '');
        // The user keeps working between the steps: an edit and a commit before the branch.
        if (key === 'sandbox commit' && !seen.includes('user commit')) {
          await writeFile(join(project, 'app.txt'), 'one\ntwo\nthree (user)\n');
          userGit(project, 'commit', '-q', '-am', 'user work');
          seen.push('user commit');
        }
        if (argv[0] === 'git') {
          // Partial review: keep hello.txt's part of the patch, drop notes.txt's.
          const patchFile = join(project, argv.at(-1)!);
          const patch = await readFile(patchFile, 'utf8');
          const kept = patch
            .split(/^(?=diff --git )/m)
            .filter((section) => !section.startsWith('diff --git a/notes.txt'))
            .join('');
          await writeFile(patchFile, kept);
          execFileSync('git', argv.slice(1), { cwd: project, stdio: 'pipe' });
          expect(await readFile(join(project, 'hello.txt'), 'utf8')).toBe('hello\n');
          expect(existsSync(join(project, 'notes.txt'))).toBe(false);
          seen.push(line);
          continue;
        }
        expect(argv[0]).toBe('agents');
        const result = await run(...argv.slice(1));
        expect(result.code, `${line}\n${result.stdout}${result.stderr}`).toBe(0);
        if (out !== undefined) await writeFile(join(project, out), result.stdout);
        seen.push(line);
        if (key === 'actor run') expect(result.stdout).toContain('done');
        if (line.endsWith('--stat')) expect(result.stdout).toMatch(/2 files changed/);
        if (line.endsWith('--dry-run')) expect(result.stdout).toContain('Dry run, nothing written');
        if (line === 'agents sandbox apply --thread t1') {
          expect(await readFile(join(project, 'notes.txt'), 'utf8')).toBe('notes\n');
        }
        if (key === 'sandbox apply undo') {
          expect(existsSync(join(project, 'hello.txt'))).toBe(false);
          expect(existsSync(join(project, 'notes.txt'))).toBe(false);
        }
        if (key === 'sandbox commit') {
          const branch = argv[argv.indexOf('--branch') + 1]!;
          const count = userGit(project, 'rev-list', '--count', `HEAD..${branch}`).trim();
          expect(count).toBe(argv.includes('--squash') ? '1' : '2');
          // On the user's latest commit, their work kept, merging back without conflicts.
          expect(userGit(project, 'rev-parse', `${branch}~${count}`).trim()).toBe(
            userGit(project, 'rev-parse', 'HEAD').trim(),
          );
          expect(userGit(project, 'show', `${branch}:app.txt`)).toContain('three (user)');
          expect(userGit(project, 'show', `${branch}:notes.txt`)).toBe('notes\n');
          const message = userGit(project, 'log', '-1', '--format=%B', branch);
          expect(message).toContain('Write hello.txt and notes.txt');
          expect(message).toContain('Agents thread: t1');
          expect(message).toContain('Files written by: mcp:fx/write_file');
          expect(message).toMatch(/^Co-authored-by: agents actor coder </m);
          if (!argv.includes('--squash')) {
            expect(userGit(project, 'log', '--format=%s', `HEAD..${branch}`)).toBe(
              'Write hello.txt and notes.txt (2/2)\nWrite hello.txt and notes.txt (1/2)\n',
            );
            expect(userGit(project, 'diff', '--name-only', `${branch}~1`, branch)).toBe(
              'notes.txt\n',
            );
          }
        }
      }
      expect(seen.filter((line) => line.startsWith('agents sandbox commit'))).toHaveLength(2);
    },
  );
});
