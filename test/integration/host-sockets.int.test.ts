/**
 * Issue 35, items 2 and 8 (IPC): a confined server reaches no host endpoint the policy did not
 * grant. A real listener under /run (where the session bus, docker.sock and an ssh-agent live)
 * answers an unconfined client; a confined tool's connect fails, with network true (through
 * `agents tool call`) and false, and succeeds only when the server's `sandbox:` rule names the
 * folder. A message queue the host made is not visible inside (own IPC namespace).
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confinementScope } from '../../src/runtime/confinement-scope.js';
import { resolveConfinement } from '../../src/confinement/confinement.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';

const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';
const IS_ROOT = process.getuid?.() === 0;
const SERVER = join(import.meta.dirname, '..', 'fixtures', 'privilege-server.mjs');

let folder: string;
let socketPath: string;
let listener: Server;
let received = 0;
beforeAll(async () => {
  if (!IS_ROOT) return;
  // Under /run itself, where the host's own sockets are: only root may create it.
  folder = mkdtempSync('/run/agents-test-sock-');
  chmodSync(folder, 0o755);
  socketPath = join(folder, 'listener.sock');
  listener = createServer((socket) => {
    received++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(socketPath, resolve));
});
afterAll(async () => {
  if (!IS_ROOT) return;
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  rmSync(folder, { recursive: true, force: true });
});

/** Connects to the socket from this process: the precondition (it answers unconfined). */
function connectHere(path: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.end();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** Runs a command line, collecting stdout. */
function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('close', () => resolve(out));
  });
}

describe('host sockets are hidden (issue 35, item 2)', () => {
  it('network true, through agents tool call: a listener under /run answers unconfined, not the tool; a rule naming its folder opens it', async () => {
    if (!BUBBLEWRAP.available || !IS_ROOT) {
      expect(MUST_CONFINE && IS_ROOT).toBe(false);
      return;
    }
    const project = await makeProjectRepo('agents-host-sockets-');
    try {
      const before = received;
      expect(await connectHere(socketPath)).toBe('connected');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(received).toBe(before + 1);
      const store = createWorkspaceStore(join(project, '.agents'));
      const call = () =>
        agents(
          project,
          'tool',
          'call',
          'priv/connect_unix',
          '--policy',
          'auto',
          '--args',
          JSON.stringify({ path: socketPath }),
        );
      await store.put('server', 'priv', {
        transport: 'stdio',
        command: process.execPath,
        args: [SERVER],
      });
      const hidden = await call();
      expect(hidden.code, hidden.stderr).toBe(0);
      expect(hidden.stdout.trim()).toBe('ENOENT');
      expect(received).toBe(before + 1);
      // The same tool reaches it once a rule names the folder: the refusal above was the hiding.
      await store.put(
        'server',
        'priv',
        {
          transport: 'stdio',
          command: process.execPath,
          args: [SERVER],
          sandbox: { readOnly: [folder] },
        },
        { overwrite: true },
      );
      const named = await call();
      expect(named.stdout.trim(), named.stderr).toBe('connected');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);

  it('network false: /run, /var/run and $XDG_RUNTIME_DIR are empty inside; the listener is unreachable', async () => {
    if (!BUBBLEWRAP.available || !IS_ROOT) {
      expect(MUST_CONFINE && IS_ROOT).toBe(false);
      return;
    }
    const sandbox = realpathSync(mkdtempSync(join(tmpdir(), 'agents-host-sockets-')));
    try {
      const probe = [
        `const fs=require("fs"),net=require("net");`,
        `const list=(d)=>{try{return fs.readdirSync(d).sort()}catch(e){return e.code}};`,
        `const s=net.connect(${JSON.stringify(socketPath)});`,
        `s.on("connect",()=>{s.end();done("connected")});s.on("error",(e)=>done(e.code));`,
        `function done(c){process.stdout.write(JSON.stringify({connect:c,run:list("/run"),varRun:list("/var/run"),xdg:list(${JSON.stringify(folder)})}))}`,
      ].join('');
      // Precondition: unconfined, the listener answers and /run has entries.
      const here = JSON.parse(await run(process.execPath, ['-e', probe], sandbox)) as Record<
        string,
        unknown
      >;
      expect(here['connect']).toBe('connected');
      expect((here['run'] as string[]).length).toBeGreaterThan(1);
      expect(here['xdg']).toEqual(['listener.sock']);
      const confinement = resolveConfinement(
        { mode: 'required', network: 'none' },
        confinementScope({
          sandboxRoot: sandbox,
          env: { ...process.env, XDG_RUNTIME_DIR: folder },
        }),
      );
      const wrapped = confinement.wrap(process.execPath, ['-e', probe], sandbox);
      const inside = JSON.parse(await run(wrapped.command, wrapped.args, sandbox)) as Record<
        string,
        unknown
      >;
      // /run holds only the mount point of the (empty) runtime folder named by the variable.
      const mountPoint = folder.slice('/run/'.length);
      expect(inside).toEqual({
        connect: 'ENOENT',
        run: [mountPoint],
        varRun: [mountPoint],
        xdg: [],
      });
    } finally {
      rmSync(sandbox, { recursive: true, force: true });
    }
  });
});

describe('SysV IPC is not shared (issue 35, item 8)', () => {
  it('a message queue the host made is listed by ipcs outside, not inside', async () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const id = execFileSync('ipcmk', ['-Q'], { encoding: 'utf8' }).match(/\d+/)![0];
    const sandbox = realpathSync(mkdtempSync(join(tmpdir(), 'agents-ipc-')));
    try {
      const listed = (text: string) => new RegExp(`^\\S+\\s+${id}\\s`, 'm').test(text);
      expect(listed(await run('ipcs', ['-q'], sandbox))).toBe(true);
      const wrapped = resolveConfinement(
        { mode: 'required' },
        confinementScope({ sandboxRoot: sandbox }),
      ).wrap('ipcs', ['-q'], sandbox);
      const inside = await run(wrapped.command, wrapped.args, sandbox);
      expect(inside).toContain('Message Queues');
      expect(listed(inside)).toBe(false);
    } finally {
      execFileSync('ipcrm', ['-q', id]);
      rmSync(sandbox, { recursive: true, force: true });
    }
  });
});
