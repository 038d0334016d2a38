import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NamedServerConfig } from '../../config/server-schema.js';
import { formatCommandLine } from '../../redact.js';
import { agentsStateDir } from '../../sandbox/state-dir.js';
import { confinementScope } from '../../runtime/confinement-scope.js';
import { resolveConfinement } from '../../confinement/confinement.js';
import { findConfinementBackend } from '../../confinement/backends.js';
import { privilegeChecks, type PrivilegeCheck } from './doctor-privileges.js';
import type { WorkspaceStore } from '../../workspace/workspace-types.js';

/** What `agents doctor` finds out about OS confinement. */
export interface ConfinementReport {
  /** The confinement backend that works here (absent when none does). */
  backend?: string;
  /** What probing the backends found: the executable of the one that works, or why none does. */
  found: { available: true; path: string } | { available: false; reason: string };
  /**
   * The probe: a confined process tries to read a file planted beside its sandbox in the state
   * folder (where a sandbox's private `run/` store lives). `ok` when it could not and could read
   * its own sandbox; absent without a backend.
   */
  probe?: { ok: boolean; detail: string };
  /** Privileges, namespaces and host sockets, proved from inside (absent without a backend). */
  privileges?: PrivilegeCheck[];
  /** Each actor's stdio servers and the confined command line each would get. */
  actors: Array<{ actor: string; servers: Array<{ server: string; commandLine: string }> }>;
  /** The servers' explicit `sandbox:` exceptions. */
  exceptions: Array<{ server: string; writable: string[]; readOnly: string[] }>;
  /** Actors or skills that could not be read (named, not fatal). */
  problems: string[];
}

/** Stands for a run's sandbox path in the printed command lines. */
const SANDBOX_PLACEHOLDER = '<SANDBOX>';

/**
 * Checks confinement for `agents doctor`: finds a backend, proves with a real confined process
 * that a file in the state folder outside the sandbox cannot be read, and builds the command line
 * each actor's stdio servers would get (for a sandbox in the state folder, shown as `<SANDBOX>`),
 * with the servers' explicit exceptions.
 */
export async function confinementReport(
  store: WorkspaceStore | undefined,
): Promise<ConfinementReport> {
  const found = findConfinementBackend({ network: 'open' });
  const probe = found.available
    ? { available: true as const, path: found.path }
    : { available: false as const, reason: found.reason };
  const report: ConfinementReport = {
    ...(found.available ? { backend: found.backend.type } : {}),
    found: probe,
    actors: [],
    exceptions: [],
    problems: [],
  };
  const state = agentsStateDir();
  await mkdir(state, { recursive: true });
  const base = await mkdtemp(join(state, 'doctor-probe-'));
  try {
    const sandbox = join(base, 'tree');
    await mkdir(sandbox);
    await mkdir(join(base, 'run'));
    const planted = join(base, 'run', 'planted-secret');
    await writeFile(planted, 'planted by agents doctor\n');
    await writeFile(join(sandbox, 'own.txt'), 'own\n');
    const scope = confinementScope({
      sandboxRoot: sandbox,
      projectDir: store?.projectDir ?? sandbox,
      ...(store === undefined ? {} : { workspaceRoot: store.root }),
    });
    if (probe.available) {
      const confinement = resolveConfinement({ mode: 'required' }, scope);
      const launch = confinement.wrap(
        process.execPath,
        [
          '-e',
          'const fs=require("fs");const r=(p)=>{try{fs.readFileSync(p);return "read"}catch(e){return e.code}};' +
            'process.stdout.write(JSON.stringify({own:r("own.txt"),planted:r(process.env.AGENTS_PROBE_TARGET)}))',
        ],
        sandbox,
      );
      // The target goes by environment: an absolute path among a server's arguments is kept
      // readable on purpose (a server's own files), which would defeat the probe.
      const result = spawnSync(launch.command, launch.args, {
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, AGENTS_PROBE_TARGET: planted },
      });
      let seen: { own?: string; planted?: string } = {};
      try {
        seen = JSON.parse(result.stdout) as typeof seen;
      } catch {
        // reported below with stderr
      }
      const ok = seen.own === 'read' && seen.planted !== undefined && seen.planted !== 'read';
      report.probe = {
        ok,
        detail: ok
          ? `a confined process read its sandbox and could not read a file planted in the state folder (${seen.planted})`
          : seen.planted === 'read'
            ? `a confined process READ a file planted in the state folder (${planted}): confinement does not hide it`
            : `the confined probe did not run as expected (exit ${String(result.status)}${result.stderr ? `: ${result.stderr.trim().split('\n').slice(-2).join(' ')}` : ''})`,
      };
      // The state folder's cover: a tmpfs the probe must not be able to unmount.
      report.privileges = privilegeChecks(
        confinement,
        sandbox,
        state,
        (scope.sockets ?? []).filter((folder) => existsSync(folder)),
      );
      if (store !== undefined) await describeActors(store, confinement, sandbox, report);
    }
    if (store !== undefined) await listExceptions(store, report);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
  return report;
}

async function describeActors(
  store: WorkspaceStore,
  confinement: ReturnType<typeof resolveConfinement>,
  sandbox: string,
  report: ConfinementReport,
): Promise<void> {
  const { planSkillConfigs } = await import('../../skills/skill-plan.js');
  const { records, problems } = await store.list('actor');
  for (const problem of problems) report.problems.push(problem.error.message);
  for (const record of records) {
    try {
      const skills = [];
      for (const name of record.value.skills) skills.push(await store.get('skill', name));
      const plan = await planSkillConfigs(store, skills);
      const servers = plan.servers
        .filter(
          (server): server is NamedServerConfig & { transport: 'stdio' } =>
            server.transport === 'stdio',
        )
        .map((server) => {
          const launch = confinement.wrap(server.command, server.args ?? [], server.cwd, {
            name: server.name,
            exceptions: server.sandbox,
          });
          return {
            server: server.name,
            commandLine: formatCommandLine(launch.command, launch.args)
              .split(sandbox)
              .join(SANDBOX_PLACEHOLDER),
          };
        });
      report.actors.push({ actor: record.name, servers });
    } catch (error) {
      report.problems.push(`actor "${record.name}": ${(error as Error).message}`);
    }
  }
}

async function listExceptions(store: WorkspaceStore, report: ConfinementReport): Promise<void> {
  const { records } = await store.list('server');
  for (const record of records) {
    const config = record.value;
    if (config.transport !== 'stdio' || config.sandbox === undefined) continue;
    report.exceptions.push({
      server: record.name,
      writable: [...(config.sandbox.writable ?? [])],
      readOnly: [...(config.sandbox.readOnly ?? [])],
    });
  }
}

/** The report as lines for the terminal. */
export function formatConfinementReport(report: ConfinementReport): string[] {
  const lines: string[] = [];
  lines.push(
    report.found.available
      ? `Confinement: ${report.backend ?? 'a backend'} at ${report.found.path}.`
      : `Confinement: NOT available: ${report.found.reason}. Stdio servers run unconfined (sandbox.confine: auto) or refuse to start (required).`,
  );
  if (report.probe !== undefined)
    lines.push(`Probe: ${report.probe.ok ? 'OK' : 'FAILED'}: ${report.probe.detail}.`);
  for (const check of report.privileges ?? [])
    lines.push(`${check.name}: ${check.ok ? 'OK' : 'FAILED'}: ${check.detail}.`);
  for (const actor of report.actors) {
    for (const server of actor.servers) {
      lines.push(`Actor "${actor.actor}", server "${server.server}" runs as:`);
      lines.push(`  ${server.commandLine}`);
    }
  }
  if (report.actors.some((actor) => actor.servers.length > 0))
    lines.push(`(${SANDBOX_PLACEHOLDER} is the run's sandbox in the state folder.)`);
  if (report.exceptions.length === 0) lines.push('No server has confinement exceptions.');
  for (const exception of report.exceptions) {
    const parts = [
      ...(exception.writable.length > 0 ? [`writable ${exception.writable.join(', ')}`] : []),
      ...(exception.readOnly.length > 0 ? [`read-only ${exception.readOnly.join(', ')}`] : []),
    ];
    lines.push(`Exception: server "${exception.server}" may also use: ${parts.join('; ')}.`);
  }
  for (const problem of report.problems) lines.push(`(skipped: ${problem})`);
  return lines;
}
