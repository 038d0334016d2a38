import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { hashTree } from '../sandbox/helpers.js';
import { agents, makeProjectRepo } from './helpers.js';

const HOSTILE_SERVER = join(import.meta.dirname, '..', 'fixtures', 'hostile-server.mjs');
const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

/**
 * Issue 23, hole 3: the commands that start a server to inspect it (`server add|test`,
 * `skill add|show`, `tool show|trust`) start it confined in an empty throwaway folder. The
 * server writes at start-up: into its working folder, and by absolute path into the project.
 */
describe('inspection commands start servers confined, never in the project', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-inspect-');
    await writeFile(join(dir, 'keep.txt'), 'mine\n');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function startupWrites(): string {
    return ['keep.txt', 'marker.txt', join(dir, 'keep.txt'), join(dir, 'marker-abs.txt')].join(':');
  }

  it(
    'server add, server test, skill add, skill show, tool show and tool trust leave the project byte-identical',
    { timeout: 180_000 },
    async () => {
      if (!BUBBLEWRAP.available) {
        expect(MUST_CONFINE).toBe(false);
        return;
      }
      const before = hashTree(dir, ['.agents', '.git']);
      const steps: string[][] = [
        [
          'server',
          'add',
          'hostile',
          '--env',
          `HOSTILE_STARTUP_WRITE=${startupWrites()}`,
          '--',
          process.execPath,
          HOSTILE_SERVER,
        ],
        ['server', 'test', 'hostile'],
        ['skill', 'add', 'hostile', '--server', 'hostile'],
        ['skill', 'show', 'hostile'],
        ['tool', 'show', 'mcp:hostile/peek'],
        ['tool', 'trust', 'hostile', '--tool', 'peek'],
      ];
      for (const argv of steps) {
        const result = await agents(dir, ...argv);
        expect([argv.slice(0, 2).join(' '), result.code, result.stderr]).toEqual([
          argv.slice(0, 2).join(' '),
          0,
          '',
        ]);
        expect(hashTree(dir, ['.agents', '.git'])).toBe(before);
      }
      expect(await readFile(join(dir, 'keep.txt'), 'utf8')).toBe('mine\n');
      expect((await readdir(dir)).sort()).toEqual(['.agents', '.git', 'README.md', 'keep.txt']);
      // Control: unconfined, the same server does change the project as it starts.
      execFileSync(process.execPath, [HOSTILE_SERVER], {
        cwd: dir,
        input: '',
        env: { ...process.env, HOSTILE_STARTUP_WRITE: startupWrites() },
      });
      expect(await readFile(join(dir, 'keep.txt'), 'utf8')).toBe('written at start-up\n');
    },
  );

  it(
    '`confine: required` in an actor of the workspace applies to server add: without bubblewrap it fails',
    { timeout: 60_000 },
    async () => {
      await mkdir(join(dir, '.agents', 'actors'), { recursive: true });
      await writeFile(
        join(dir, '.agents', 'actors', 'strict.yaml'),
        'skills: [other]\nsandbox:\n  confine: required\n',
      );
      const bin = join(dir, '..', `${dir.split('/').pop()}-bin`);
      await mkdir(bin, { recursive: true });
      await symlink(execFileSync('which', ['git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
      const path = process.env['PATH'];
      process.env['PATH'] = bin;
      try {
        const added = await agents(
          dir,
          'server',
          'add',
          'hostile',
          '--',
          process.execPath,
          HOSTILE_SERVER,
        );
        expect(added.code).not.toBe(0);
        expect(added.stderr).toMatch(/"bwrap"\) was not found on PATH/);
        expect(added.stderr).toContain('apt-get install bubblewrap');
      } finally {
        process.env['PATH'] = path;
        await rm(bin, { recursive: true, force: true });
      }
    },
  );
});
