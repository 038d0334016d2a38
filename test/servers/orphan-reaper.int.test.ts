import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  processStartTime,
  reapOrphanedServers,
  RUN_DIR_ENV,
  type ServerProcessRecord,
} from '../../src/servers/orphan-reaper.js';
import { createServerManager } from '../../src/servers/server-manager.js';
import { isProcessGroupAlive } from '../../src/servers/process-group.js';
import { faultServerConfig, groupReaped, processReaped } from './fixture.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempRunDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agents-run-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function killGroupQuietly(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** A long-lived process in its own group and session, unrelated to any server record. */
async function spawnSleeper(): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], {
    detached: true,
    stdio: 'ignore',
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  cleanups.push(() => killGroupQuietly(child.pid));
  return child as ChildProcess & { pid: number };
}

/** The pid of a process that has exited (a host that is certainly dead). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

function record(overrides: Partial<ServerProcessRecord> & { pgid: number; hostPid: number }) {
  return {
    hostStartTime: null,
    startTime: processStartTime(overrides.pgid),
    serverName: 'forged',
    target: 'node',
    command: process.execPath,
    createdAt: new Date().toISOString(),
    ...overrides,
  } satisfies ServerProcessRecord;
}

// Reaping reads /proc: these tests describe the Linux behaviour (CI and development run Linux).
describe('reaping servers of a host killed with SIGKILL (Linux)', () => {
  it('a new manager reaps the stubborn server group of a host that was SIGKILLed', async () => {
    const runDir = await tempRunDir();
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
      host.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      host.once('exit', (code) => reject(new Error(`host exited early (${code})`)));
    });
    cleanups.push(() => killGroupQuietly(pgid));
    expect(pgid).toBeGreaterThan(0);
    expect(await readdir(runDir)).toEqual([`${host.pid}-${pgid}.json`]);

    host.kill('SIGKILL');
    expect(await processReaped(host.pid!)).toBe(true);
    // The premise: the stubborn server ignores stdin EOF, so without reaping it lives on.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isProcessGroupAlive(pgid)).toBe(true);

    await using manager = createServerManager({ runDir });
    await using lease = await manager.acquire([faultServerConfig('fresh')]);
    expect(lease.servers[0]!.status).toBe('ready');
    expect(await groupReaped(pgid)).toBe(true);
    const left = await readdir(runDir);
    expect(left).not.toContain(`${host.pid}-${pgid}.json`);
    // The new server is recorded under this host while it runs.
    expect(left).toEqual([`${process.pid}-${lease.servers[0]!.pid}.json`]);
    await lease.release();
    expect(await readdir(runDir)).toEqual([]);
  });

  it('never kills a live group whose identity does not match the record, nor one of a live host', async () => {
    const runDir = await tempRunDir();
    const dead = await deadPid();
    const stranger = await spawnSleeper();
    const matching = await spawnSleeper();
    const strangerFile = join(runDir, `${dead}-${stranger.pid}.json`);
    const liveHostFile = join(runDir, `${process.ppid}-${matching.pid}.json`);
    // A pid that was reused by an unrelated process: its start time differs from the record.
    await writeFile(
      strangerFile,
      JSON.stringify(record({ hostPid: dead, pgid: stranger.pid, startTime: 1 })),
    );
    // The host that recorded it is alive (our parent): its servers are its business.
    await writeFile(
      liveHostFile,
      JSON.stringify(
        record({
          hostPid: process.ppid,
          pgid: matching.pid,
          hostStartTime: processStartTime(process.ppid),
        }),
      ),
    );

    const report = await reapOrphanedServers({ runDir, graceMs: 100 });
    expect(report.reaped).toEqual([]);
    expect(report.dropped.map((entry) => entry.pgid)).toEqual([stranger.pid]);
    expect(isProcessGroupAlive(stranger.pid)).toBe(true);
    expect(isProcessGroupAlive(matching.pid)).toBe(true);
    expect(existsSync(strangerFile)).toBe(false);
    expect(existsSync(liveHostFile)).toBe(true);
  });

  it('reaps a matching group of a dead host (SIGTERM is enough for a polite one)', async () => {
    const runDir = await tempRunDir();
    const dead = await deadPid();
    const orphan = await spawnSleeper();
    const file = join(runDir, `${dead}-${orphan.pid}.json`);
    await writeFile(file, JSON.stringify(record({ hostPid: dead, pgid: orphan.pid })));
    const report = await reapOrphanedServers({ runDir, graceMs: 1_000 });
    expect(report.reaped.map((entry) => entry.pgid)).toEqual([orphan.pid]);
    expect(await groupReaped(orphan.pid)).toBe(true);
    expect(existsSync(file)).toBe(false);
  });
});
