import { spawn } from 'node:child_process';
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { RUN_DIR_ENV } from '../../src/servers/orphan-reaper.js';
import { isProcessGroupAlive } from '../../src/servers/process-group.js';
import { agents } from '../cli/helpers.js';
import { groupReaped, processReaped } from './fixture.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('agents doctor (Linux)', () => {
  it('stops at once the stubborn server a SIGKILLed run left, and says so when nothing is left', async () => {
    const runDir = await mkdtemp(join(tmpdir(), 'agents-doctor-run-'));
    const cwd = await realpath(await mkdtemp(join(tmpdir(), 'agents-doctor-cwd-')));
    cleanups.push(() => rm(runDir, { recursive: true, force: true }));
    cleanups.push(() => rm(cwd, { recursive: true, force: true }));
    const host = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('./exit-host.mts', import.meta.url)), 'hold'],
      { env: { ...process.env, [RUN_DIR_ENV]: runDir }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    cleanups.push(() => {
      host.kill('SIGKILL');
    });
    const pgid = await new Promise<number>((resolve, reject) => {
      let out = '';
      host.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      host.once('exit', (code) => reject(new Error(`host exited early (${code})`)));
    });
    cleanups.push(() => {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // gone
      }
    });
    host.kill('SIGKILL');
    expect(await processReaped(host.pid!)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isProcessGroupAlive(pgid)).toBe(true);

    const previous = process.env[RUN_DIR_ENV];
    process.env[RUN_DIR_ENV] = runDir;
    try {
      const doctor = await agents(cwd, 'doctor', '--json');
      expect(doctor.code, doctor.stderr).toBe(0);
      expect(JSON.parse(doctor.stdout)).toMatchObject({
        reaped: [{ pgid, hostPid: host.pid }],
      });
      expect(await groupReaped(pgid)).toBe(true);
      expect(await readdir(runDir)).toEqual([]);
      const again = await agents(cwd, 'doctor');
      expect(again.stdout).toContain('No server left running by a killed run.');
    } finally {
      if (previous === undefined) delete process.env[RUN_DIR_ENV];
      else process.env[RUN_DIR_ENV] = previous;
    }
  });
});
