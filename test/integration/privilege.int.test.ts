/**
 * Issue 35, item 1: a confined server has no privilege, whoever runs the CLI. From a tool (the
 * fixture's `shell`, through `agents tool call`), the attacks that worked when the CLI ran as
 * root: unmount the tmpfs hiding the project's `.git` and delete a branch, remount a read-only
 * folder writable and overwrite the user's keep.txt, unmount the state folder's cover; and, with
 * `network: false`, enter the host's network namespace (a handle to it bound in) to reach a
 * listener there. Each runs as root and as an unprivileged user; the precondition is the same
 * script succeeding under the command line servers got before (no user namespace, no filter).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confinementScope } from '../../src/runtime/confinement-scope.js';
import { resolveConfinement } from '../../src/confinement/confinement.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents, agentsArgv } from '../cli/helpers.js';
import { hashTree, repoFingerprint } from '../sandbox/helpers.js';
import { unprivilegedUser, withoutPrivilegeDrop } from '../helpers/unprivileged.js';

const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';
const IS_ROOT = process.getuid?.() === 0;
const SERVER = join(import.meta.dirname, '..', 'fixtures', 'privilege-server.mjs');

/** The attack, each step printing `step=exit code`. */
function attackScript(paths: { project: string; canary: string; state: string }): string {
  return [
    "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status",
    `umount -l '${paths.project}/.git' 2>/dev/null; echo "umount-git=$?"`,
    `umount -l '${paths.state}' 2>/dev/null; echo "umount-state=$?"`,
    `mount -o remount,rw '${paths.canary}' 2>/dev/null; echo "remount-canary=$?"`,
    `mount -o remount,rw / 2>/dev/null; echo "remount-root=$?"`,
    `git -C '${paths.project}' branch -D feature >/dev/null 2>&1; echo "branch-delete=$?"`,
    `echo pwned 2>/dev/null > '${paths.canary}/keep.txt'; echo "canary-write=$?"`,
  ].join('\n');
}

/** `step=code` pairs of the script's output. */
function steps(output: string): Record<string, string> {
  return Object.fromEntries(
    [...output.matchAll(/^([a-z-]+)=(\d+)$/gm)].map((match) => [match[1]!, match[2]!]),
  );
}

/** A user's project with a branch to delete, and a keep.txt outside it, read-only inside. */
function makeWorld(root: string) {
  const project = join(root, 'project');
  const canary = join(root, 'canary');
  mkdirSync(project, { recursive: true });
  mkdirSync(canary);
  writeFileSync(join(canary, 'keep.txt'), 'keep\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 'T');
  writeFileSync(join(project, 'keep.txt'), 'keep\n');
  git('add', 'keep.txt');
  git('commit', '-q', '-m', 'init');
  git('branch', 'feature');
  return { project, canary };
}

let scratch: string;
beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'agents-privilege-')));
  chmodSync(scratch, 0o755);
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('a confined server has no privilege (issue 35, item 1)', () => {
  it('as root: the old command line lets the attack through; agents tool call stops every step, the repo byte for byte unchanged', async () => {
    if (!BUBBLEWRAP.available || !IS_ROOT) {
      expect(MUST_CONFINE && IS_ROOT).toBe(false);
      return;
    }
    const state = process.env['AGENTS_STATE_DIR']!;
    // Precondition, on a copy: the same script under the command line servers got before.
    const before = join(scratch, 'before');
    mkdirSync(before);
    const old = makeWorld(before);
    const oldScope = confinementScope({
      sandboxRoot: old.project,
      projectDir: old.project,
      workspaceRoot: join(old.project, '.agents'),
    });
    const oldWrap = resolveConfinement(
      { mode: 'required' },
      {
        ...oldScope,
        hidden: [...(oldScope.hidden ?? []), join(old.project, '.git')],
        guarded: [...(oldScope.guarded ?? []), join(old.project, '.git')],
      },
    ).wrap('/bin/sh', ['-c', attackScript({ ...old, state })], old.project, {
      exceptions: { readOnly: [old.canary] },
    });
    const bwrapArgs = oldWrap.args.slice(4); // past: -c SCRIPT FILTER BWRAP
    const unprivileged = spawnSync(oldWrap.args[3]!, withoutPrivilegeDrop(bwrapArgs), {
      encoding: 'utf8',
      timeout: 20_000,
    });
    const then = steps(unprivileged.stdout);
    expect(unprivileged.stdout).not.toMatch(/CapEff:\s+0{16}/);
    expect(then).toMatchObject({
      'umount-git': '0',
      'remount-canary': '0',
      'branch-delete': '0',
      'canary-write': '0',
    });
    expect(readFileSync(join(old.canary, 'keep.txt'), 'utf8')).toBe('pwned\n');

    // The attack itself, through the CLI.
    const world = makeWorld(join(scratch, 'now'));
    const outcome = await attackThroughCli(world, state, (argv) => agents(world.project, ...argv));
    expect(outcome.status).toMatch(/CapEff:\s+0{16}/);
    expect(outcome.status).toMatch(/NoNewPrivs:\s+1/);
    expect(outcome.status).toMatch(/Seccomp:\s+2/);
    for (const step of Object.keys(then)) expect(outcome.steps[step], step).not.toBe('0');
  });

  it('as an unprivileged user: agents tool call stops every step, the repo byte for byte unchanged', async () => {
    const user = unprivilegedUser();
    if (!BUBBLEWRAP.available || user === undefined) {
      expect(MUST_CONFINE && IS_ROOT).toBe(false);
      return;
    }
    const root = join(scratch, 'user');
    mkdirSync(root);
    const world = makeWorld(root);
    const state = join(root, 'state');
    mkdirSync(state);
    execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, root]);
    const outcome = await attackThroughCli(world, state, (argv) =>
      runAs(user.prefix, world.project, agentsArgv(...argv), {
        HOME: user.home,
        AGENTS_STATE_DIR: state,
      }),
    );
    expect(outcome.status).toMatch(/CapEff:\s+0{16}/);
    expect(outcome.status).toMatch(/Seccomp:\s+2/);
    for (const step of ['umount-git', 'remount-canary', 'branch-delete', 'canary-write'])
      expect(outcome.steps[step], step).not.toBe('0');
  });
});

describe('network: false: no way into the host network namespace (issue 35, item 1)', () => {
  it('a handle on the host namespace bound in: the old command line enters it and reaches a host listener; now refused, as root and as an unprivileged user', async () => {
    if (!BUBBLEWRAP.available || !IS_ROOT) {
      expect(MUST_CONFINE && IS_ROOT).toBe(false);
      return;
    }
    const root = join(scratch, 'netns');
    const sandbox = join(root, 'sandbox');
    mkdirSync(sandbox, { recursive: true });
    chmodSync(root, 0o755);
    const handle = join(root, 'host-net');
    writeFileSync(handle, '');
    execFileSync('mount', ['--bind', '/proc/self/ns/net', handle]);
    let connections = 0;
    const listener: Server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    try {
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      const port = (listener.address() as { port: number }).port;
      const connect = `const s=require("net").connect(${port},"127.0.0.1");s.on("connect",()=>{s.end();process.exit(0)});s.on("error",()=>process.exit(3))`;
      const script = [
        `'${process.execPath}' -e '${connect}'; echo "direct=$?"`,
        `nsenter --net='${handle}' '${process.execPath}' -e '${connect}' 2>/dev/null; echo "nsenter=$?"`,
      ].join('\n');
      const wrapped = resolveConfinement(
        { mode: 'required', network: 'none' },
        { sandboxRoot: sandbox },
      ).wrap('/bin/sh', ['-c', script], sandbox, { exceptions: { readOnly: [handle] } });
      // Precondition: the command line servers got before enters the host namespace.
      const old = await runAs(
        [],
        sandbox,
        [wrapped.args[3]!, ...withoutPrivilegeDrop(wrapped.args.slice(4))],
        {},
      );
      expect(steps(old.stdout), old.stderr).toEqual({ direct: '3', nsenter: '0' });
      expect(connections).toBe(1);

      const now = await runAs([], sandbox, [wrapped.command, ...wrapped.args], {});
      expect(steps(now.stdout), now.stderr).toEqual({ direct: '3', nsenter: '1' });
      const user = unprivilegedUser();
      if (user !== undefined) {
        // The same command line, with the filter where the user can read it (the host's copy is
        // in root's state folder).
        const filter = join(root, 'filter.bpf');
        cpSync(wrapped.args[2]!, filter);
        chmodSync(filter, 0o644);
        const args = [...wrapped.args];
        args[2] = filter;
        const asUser = await runAs(user.prefix, sandbox, [wrapped.command, ...args], {});
        expect(steps(asUser.stdout), asUser.stderr).toEqual({ direct: '3', nsenter: '1' });
      }
      expect(connections).toBe(1);
    } finally {
      listener.close();
      execFileSync('umount', [handle]);
    }
  });
});

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Registers the fixture (its keep.txt folder readable by name), runs the attack through
 * `agents tool call`, and checks the repo, the keep.txt and the planted secret are untouched.
 */
async function attackThroughCli(
  world: { project: string; canary: string },
  state: string,
  cli: (argv: string[]) => Promise<CliOutcome>,
): Promise<{ status: string; steps: Record<string, string> }> {
  const store = createWorkspaceStore(join(world.project, '.agents'));
  await store.put('server', 'priv', {
    transport: 'stdio',
    command: process.execPath,
    args: [SERVER],
    sandbox: { readOnly: [world.canary] },
  });
  execFileSync('chown', ['-R', `--reference=${world.project}`, join(world.project, '.agents')]);
  const repo = repoFingerprint(world.project, { skip: ['.agents'] });
  const canary = hashTree(world.canary);
  const script = attackScript({ ...world, state });
  const run = await cli([
    'tool',
    'call',
    'priv/shell',
    '--policy',
    'auto',
    '--args',
    JSON.stringify({ script }),
  ]);
  expect(run.code, run.stderr).toBe(0);
  // The tool ran: every step printed its result.
  const result = steps(run.stdout);
  expect(Object.keys(result).sort()).toEqual(
    [...run.stdout.matchAll(/^([a-z-]+)=/gm)].map((m) => m[1]).sort(),
  );
  expect(Object.keys(result)).toHaveLength(6);
  expect(repoFingerprint(world.project, { skip: ['.agents'] })).toEqual(repo);
  expect(hashTree(world.canary)).toBe(canary);
  expect(repo['refs']).toContain('refs/heads/feature');
  return { status: run.stdout, steps: result };
}

/** Runs argv as another user (argv prefix), with extra variables; collects the output. */
function runAs(
  prefix: readonly string[],
  cwd: string,
  argv: readonly string[],
  env: Record<string, string>,
): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = [...prefix, ...argv];
    const child = spawn(command!, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
