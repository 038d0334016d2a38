import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import {
  checkEnvironment,
  checkSqlite,
  formatEnvironment,
} from '../../src/cli/doctor/environment.js';

describe('agents doctor: environment checks', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-doctor-env-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const byName = (checks: ReturnType<typeof checkEnvironment>) =>
    Object.fromEntries(checks.map((check) => [check.name, check]));

  it('passes on this machine (the test machine has what runs need)', () => {
    const checks = byName(checkEnvironment({ env: { ...process.env, AGENTS_STATE_DIR: dir } }));
    expect(checks['node']?.status).toBe('ok');
    expect(checks['git']?.status).toBe('ok');
    expect(checks['git']?.detail).toMatch(/^git version \d+\.\d+/);
    expect(checks['sqlite']?.status).toBe('ok');
    expect(checks['state folder']?.status).toBe('ok');
  });

  it('names both packages of the SQLite checkpointer when neither is found, with one install line', () => {
    // Looked up from an empty folder: a real resolution that finds nothing.
    const check = checkSqlite(createRequire(join(dir, 'nothing-here.js')));
    expect(check).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining(
        '@langchain/langgraph-checkpoint-sqlite and better-sqlite3 are not installed',
      ),
      fix: expect.stringContaining(
        'npm install @langchain/langgraph-checkpoint-sqlite better-sqlite3',
      ),
    });
    expect(checkSqlite().detail).toContain('@langchain/langgraph-checkpoint-sqlite found');
  });

  it('names each problem and what to do: old Node, no git, no bubblewrap, a bad state folder', async () => {
    const open = join(dir, 'open');
    await writeFile(join(dir, 'file'), 'x');
    const checks = byName(
      checkEnvironment({
        env: { ...process.env, AGENTS_STATE_DIR: join(dir, 'file') },
        nodeVersion: '20.10.0',
        gitPath: join(dir, 'no-git'),
        confinement: { type: 'bubblewrap', path: join(dir, 'no-bwrap') },
      }),
    );
    expect(checks['node']).toMatchObject({
      status: 'fail',
      detail: 'Node 20.10.0 is older than 20.19',
    });
    expect(checks['node']?.fix).toContain('install Node 20.19');
    expect(checks['git']).toMatchObject({ status: 'fail' });
    expect(checks['git']?.fix).toContain('apt-get install git');
    if (process.platform === 'linux') {
      expect(checks['bubblewrap']).toMatchObject({ status: 'warn' });
      expect(checks['bubblewrap']?.fix).toBe('install it: `apt-get install bubblewrap`');
    }
    expect(checks['state folder']).toMatchObject({ status: 'fail' });
    expect(checks['state folder']?.detail).toContain('is not a folder');
    expect(checks['state folder']?.fix).toContain('AGENTS_STATE_DIR');

    // A state folder others may write to is a warning with the chmod that fixes it.
    await mkdir(open);
    await chmod(open, 0o777);
    const loose = byName(checkEnvironment({ env: { ...process.env, AGENTS_STATE_DIR: open } }));
    expect(loose['state folder']).toMatchObject({ status: 'warn' });
    expect(loose['state folder']?.fix).toBe(`\`chmod go-w ${open}\``);

    const text = formatEnvironment(Object.values(checks));
    expect(text.split('\n')[0]).toBe('Environment:');
    expect(text).toMatch(
      /^ {2}fail {2}node {10}Node 20\.10\.0 is older than 20\.19\n {22}→ install Node/m,
    );
  });
});
