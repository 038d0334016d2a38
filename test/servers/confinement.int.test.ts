import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { resolveConfinement, type Confinement } from '../../src/confinement/confinement.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createStdioTransport } from '../../src/servers/stdio-transport.js';
import type { StdioTransport } from '../../src/servers/stdio-transport-types.js';
import { FAULT_SERVER, faultServerConfig, groupReaped, launcherFolder } from './fixture.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import { NPM_START_MARKER } from '../../src/confinement/npm-cache.js';

const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

let scratch: string;
let sandbox: string;
let project: string;
beforeEach(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'confine-argv-')));
  sandbox = join(scratch, 'sandbox');
  project = join(scratch, 'project');
  await mkdir(sandbox);
  await mkdir(join(project, '.agents'), { recursive: true });
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The mount flags of a wrapped command line, as [flag, ...operands] groups. */
function mounts(argv: readonly string[]): string[][] {
  const out: string[][] = [];
  const arity: Record<string, number> = {
    '--ro-bind': 2,
    '--bind': 2,
    '--tmpfs': 1,
    '--dev': 1,
    '--proc': 1,
  };
  for (let index = 0; index < argv.length && argv[index] !== '--'; index++) {
    const flag = argv[index]!;
    const count = arity[flag];
    if (count === undefined) continue;
    out.push([flag, ...argv.slice(index + 1, index + 1 + count)]);
    index += count;
  }
  return out;
}

describe('resolveConfinement', () => {
  it('off never wraps; a missing bubblewrap makes auto unconfined and required an error', () => {
    const off = resolveConfinement({ mode: 'off' }, { sandboxRoot: sandbox });
    expect(off.kind).toBe('none');
    expect(off.wrap('node', ['s.js'], sandbox)).toEqual({ command: 'node', args: ['s.js'] });
    const missing = join(scratch, 'bin', 'bwrap');
    const auto = resolveConfinement(
      { mode: 'auto', backend: { type: 'bubblewrap', path: missing } },
      { sandboxRoot: sandbox },
    );
    expect(auto.kind).toBe('none');
    expect(auto.reason).toContain(missing);
    let error: unknown;
    try {
      resolveConfinement(
        { mode: 'required', backend: { type: 'bubblewrap', path: missing } },
        { sandboxRoot: sandbox },
      );
    } catch (caught) {
      error = caught;
    }
    expect(AgentsError.hasCode(error, 'CONFINEMENT_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(/apt-get install bubblewrap/);
  });

  it('builds the mounts in order: read-only root, private /tmp, hidden folders, the sandbox over the project, the sandbox writable last', () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const workspace = join(project, '.agents');
    const elsewhere = join(scratch, 'state');
    const confinement = resolveConfinement(
      { mode: 'auto', network: 'none' },
      { sandboxRoot: sandbox, projectDir: project, hidden: [workspace, scratch + '/missing'] },
    );
    const wrapped = confinement.wrap('/usr/bin/env', ['node', 'server.js'], sandbox);
    // bubblewrap starts through /bin/sh only to get the seccomp filter on fd 3.
    expect(wrapped.command).toBe('/bin/sh');
    expect(wrapped.args[3]).toBe(BUBBLEWRAP.path);
    expect(wrapped.args).toEqual(
      expect.arrayContaining(['--die-with-parent', '--unshare-pid', '--unshare-net']),
    );
    expect(wrapped.args.slice(-6)).toEqual([
      '--chdir',
      sandbox,
      '--',
      '/usr/bin/env',
      'node',
      'server.js',
    ]);
    expect(mounts(wrapped.args)).toEqual([
      ['--ro-bind', '/', '/'],
      ['--dev', '/dev'],
      ['--proc', '/proc'],
      ['--tmpfs', '/tmp'],
      ...(mounts(wrapped.args).some((m) => m[1] === '/var/tmp') ? [['--tmpfs', '/var/tmp']] : []),
      // The workspace lies in the project, which the sandbox covers: no tmpfs needed there.
      ['--bind', sandbox, project],
      ['--bind', sandbox, sandbox],
    ]);
    // A hidden folder outside the project gets a tmpfs, before the sandbox binds.
    mkdirSync(elsewhere, { recursive: true });
    const hiding = resolveConfinement(
      { mode: 'auto' },
      { sandboxRoot: sandbox, projectDir: project, hidden: [elsewhere] },
    ).wrap('/usr/bin/env', [], sandbox);
    expect(hiding.args).not.toContain('--unshare-net');
    const order = mounts(hiding.args).map((m) => m.join(' '));
    expect(order.indexOf(`--tmpfs ${elsewhere}`)).toBeLessThan(
      order.indexOf(`--bind ${sandbox} ${sandbox}`),
    );
  });

  it('keeps the project read-only instead of covering it when the server lives in the project', () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const confinement = resolveConfinement(
      { mode: 'auto' },
      { sandboxRoot: sandbox, projectDir: project },
    );
    const inProject = confinement.wrap(
      process.execPath,
      [join(project, 'tools/server.mjs')],
      sandbox,
    );
    expect(mounts(inProject.args)).not.toContainEqual(['--bind', sandbox, project]);
    const outside = confinement.wrap(process.execPath, [FAULT_SERVER], sandbox);
    expect(mounts(outside.args)).toContainEqual(['--bind', sandbox, project]);
  });
});

describe('a confined stdio server keeps the lifecycle guarantees', () => {
  let confinement: Confinement;
  beforeEach(() => {
    confinement = resolveConfinement({ mode: 'auto' }, { sandboxRoot: sandbox });
  });

  async function start(mode: string): Promise<StdioTransport> {
    const launch = confinement.wrap(process.execPath, [FAULT_SERVER, mode], sandbox);
    const transport = createStdioTransport({
      serverName: mode,
      command: launch.command,
      args: launch.args,
      signalExitCodes: confinement.kind === 'bubblewrap',
      shutdownMs: 500,
      runDir: null,
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    return transport;
  }

  it('close() takes down the whole group: a grandchild holding the pipes, a server ignoring SIGTERM', async () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    for (const mode of ['fork-grandchild', 'stubborn']) {
      const transport = await start(mode);
      const pgid = transport.pid;
      expect(transport.isGroupAlive()).toBe(true);
      await transport.close();
      expect([mode, await groupReaped(pgid)]).toEqual([mode, true]);
    }
  });

  it('a crash inside reports the signal, not the wrapper exit code', async () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const transport = await start('normal');
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport
      .send({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'crash', arguments: {} },
      })
      .catch(() => undefined);
    await closed;
    expect(transport.exit).toEqual({ exitCode: null, signal: 'SIGKILL' });
  });

  it('the server dies with its host even when the host is killed with SIGKILL (no exit hook, no reaper)', async () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const host = fileURLToPath(new URL('./exit-host.mts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', host, 'hold', 'confined'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, AGENTS_SERVERS_RUN_DIR: join(scratch, 'run') },
    });
    const pgid = await new Promise<number>((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      child.once('exit', () => reject(new Error('host exited early')));
    });
    expect(pgid).toBeGreaterThan(0);
    child.kill('SIGKILL');
    expect(await groupReaped(pgid, 8_000)).toBe(true);
  });
});

describe('the hidden set and the working folder (real bubblewrap)', () => {
  function runConfined(confinement: Confinement, cwd: string | undefined, code: string) {
    const launch = confinement.wrap(process.execPath, ['-e', code], cwd);
    return spawnSync(launch.command, launch.args, { encoding: 'utf8', timeout: 30_000 });
  }

  it('a folder holding the sandbox is hidden with the sandbox mounted back; a configured cwd under /tmp stays readable', () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    // The state folder layout: a secret beside the sandbox, in a folder that contains it.
    const state = join(scratch, 'state');
    const inner = join(state, 'projects', 'p', 'box', 'tree');
    mkdirSync(inner, { recursive: true });
    writeFileSync(join(state, 'token.json'), 'SECRET');
    writeFileSync(join(inner, 'mine.txt'), 'mine');
    const confinement = resolveConfinement(
      { mode: 'auto' },
      { sandboxRoot: inner, hidden: [state, join(state, 'projects', 'p', 'box')] },
    );
    const args = confinement.wrap(process.execPath, [], inner).args;
    const order = mounts(args).map((m) => m.join(' '));
    expect(order.indexOf(`--tmpfs ${state}`)).toBeLessThan(
      order.indexOf(`--bind ${inner} ${inner}`),
    );
    const read = runConfined(
      confinement,
      inner,
      `const fs=require('fs');for(const p of ['mine.txt','${join(state, 'token.json')}']){try{process.stdout.write(fs.readFileSync(p,'utf8')+';')}catch(e){process.stdout.write(e.code+';')}}try{fs.writeFileSync('${join(state, 'x')}','x')}catch(e){process.stdout.write(e.code)}`,
    );
    expect(read.stderr).toBe('');
    expect(read.stdout).toBe('mine;ENOENT;EROFS');

    // A configured working folder elsewhere under /tmp (private to the server) stays readable:
    // before, every run failed with "bwrap: Can't chdir".
    const cwd = join(scratch, 'server-cwd');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'data.txt'), 'data');
    const other = resolveConfinement(
      { mode: 'auto' },
      { sandboxRoot: sandbox, projectDir: project },
    );
    const inCwd = runConfined(
      other,
      cwd,
      `process.stdout.write(require('fs').readFileSync('data.txt','utf8'))`,
    );
    expect(inCwd.stderr).toBe('');
    expect(inCwd.stdout).toBe('data');
  });
});

describe('per-server exceptions (sandbox.writable / readOnly)', () => {
  it('a writable exception is mounted writable; one overlapping the project or the state folder is refused', () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const data = join(scratch, 'data');
    const state = join(scratch, 'state');
    mkdirSync(data);
    mkdirSync(join(state, 'oauth'), { recursive: true });
    const confinement = resolveConfinement(
      { mode: 'auto' },
      { sandboxRoot: sandbox, projectDir: project, hidden: [state], guarded: [state] },
    );
    const ok = confinement.wrap(process.execPath, [], sandbox, {
      exceptions: { writable: [data] },
    });
    expect(mounts(ok.args)).toContainEqual(['--bind', data, data]);
    for (const bad of [project, join(project, '.agents'), join(state, 'oauth'), scratch]) {
      let error: unknown;
      try {
        confinement.wrap(process.execPath, [], sandbox, { exceptions: { writable: [bad] } });
      } catch (caught) {
        error = caught;
      }
      expect([bad, AgentsError.hasCode(error, 'CONFIG_INVALID')]).toEqual([bad, true]);
    }
  });
});

describe('npx servers get a private writable npm cache', () => {
  it("an npx server writes its own cache (one per server, outside the user's ~/.npm); other commands get none", () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    // A stand-in `npx`: writes where npm would put its cache, and says what npm was told.
    const bin = join(scratch, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'npx'),
      '#!/bin/sh\necho fetched > "$npm_config_cache/marker" && echo "cache-first=$npm_config_prefer_offline"\n',
      { mode: 0o755 },
    );
    const saved = process.env['XDG_CACHE_HOME'];
    process.env['XDG_CACHE_HOME'] = join(scratch, 'cache');
    try {
      const confinement = resolveConfinement(
        { mode: 'auto' },
        { sandboxRoot: sandbox, projectDir: project, hidden: [scratch] },
      );
      const launch = confinement.wrap(join(bin, 'npx'), ['-y', 'some-server'], sandbox, {
        name: 'fs',
      });
      const run = spawnSync(launch.command, launch.args, { encoding: 'utf8', timeout: 30_000 });
      expect(run.stdout.trim()).toBe('cache-first=true');
      const cache = join(scratch, 'cache', 'agents', 'npm', 'fs');
      expect(readFileSync(join(cache, 'marker'), 'utf8')).toBe('fetched\n');
      expect(mounts(launch.args)).toContainEqual(['--bind', cache, cache]);
      const plain = confinement.wrap(process.execPath, [], sandbox, { name: 'fs' });
      expect(plain.args).not.toContain('npm_config_cache');
    } finally {
      if (saved === undefined) delete process.env['XDG_CACHE_HOME'];
      else process.env['XDG_CACHE_HOME'] = saved;
    }
  });
});

describe('an npx server whose first start was cut short', () => {
  it('a failed start leaves its marker; the next start removes the half install, says so once, and clears the marker once the server answered', async () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    // Stand-in `npx` launchers: one that dies before answering (a start killed during the
    // install), one that runs a real MCP server (kept in the checkout: see launcherFolder).
    const bin = launcherFolder('npx-');
    mkdirSync(join(bin, 'dies'), { recursive: true });
    mkdirSync(join(bin, 'works'), { recursive: true });
    writeFileSync(join(bin, 'dies', 'npx'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    writeFileSync(
      join(bin, 'works', 'npx'),
      `#!/bin/sh\nexec "${process.execPath}" "${FAULT_SERVER}" normal\n`,
      { mode: 0o755 },
    );
    const saved = process.env['XDG_CACHE_HOME'];
    process.env['XDG_CACHE_HOME'] = join(scratch, 'cache');
    const cache = join(scratch, 'cache', 'agents', 'npm', 'cut-short');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const confinement = resolveConfinement(
        { mode: 'auto' },
        { sandboxRoot: sandbox, projectDir: project, hidden: [] },
      );
      const start = async (launcher: string): Promise<void> => {
        const server = createManagedServer(
          { ...faultServerConfig('cut-short'), command: launcher, args: ['-y', 'some-server'] },
          { confinement, cwd: sandbox, runDir: null },
        );
        try {
          await server.start();
        } finally {
          await server.close();
        }
      };
      await expect(start(join(bin, 'dies', 'npx'))).rejects.toThrow(/cut-short/);
      expect(existsSync(join(cache, NPM_START_MARKER))).toBe(true);
      // What npm left when it was killed mid-extract.
      mkdirSync(join(cache, '_npx', 'abc', 'node_modules', 'half'), { recursive: true });

      await start(join(bin, 'works', 'npx'));
      expect(existsSync(join(cache, '_npx'))).toBe(false);
      expect(existsSync(join(cache, NPM_START_MARKER))).toBe(false);
      const notices = stderr.mock.calls
        .map(([text]) => String(text))
        .filter((text) => text.includes('removed a partial npm install'));
      expect(notices).toEqual([
        `[agents] server "cut-short": removed a partial npm install left by a start that was cut short (${join(cache, '_npx')}); npx installs it again.\n`,
      ]);
    } finally {
      stderr.mockRestore();
      if (saved === undefined) delete process.env['XDG_CACHE_HOME'];
      else process.env['XDG_CACHE_HOME'] = saved;
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe('a server cannot name its way into a guarded folder', () => {
  it('a working folder or readOnly exception in the state folder or workspace is refused', () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const state = join(scratch, 'guarded-state');
    mkdirSync(join(state, 'oauth'), { recursive: true });
    const confinement = resolveConfinement(
      { mode: 'auto' },
      { sandboxRoot: sandbox, projectDir: project, hidden: [state], guarded: [state] },
    );
    const attempts: [string, () => unknown][] = [
      ['cwd = state', () => confinement.wrap(process.execPath, [], state)],
      ['cwd in state', () => confinement.wrap(process.execPath, [], join(state, 'oauth'))],
      [
        'readOnly = state',
        () =>
          confinement.wrap(process.execPath, [], sandbox, { exceptions: { readOnly: [state] } }),
      ],
    ];
    for (const [what, attempt] of attempts) {
      let error: unknown;
      try {
        attempt();
      } catch (caught) {
        error = caught;
      }
      expect([what, AgentsError.hasCode(error, 'CONFIG_INVALID')]).toEqual([what, true]);
    }
    // The sandbox itself as working folder stays fine.
    expect(confinement.wrap(process.execPath, [], sandbox).args).toContain('--chdir');
  });
});

describe('a hidden home keeps what the server needs', () => {
  it('the package root of a server script under a hidden home stays readable; its other files do not', () => {
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      return;
    }
    const home = join(scratch, 'home');
    const pkg = join(home, 'servers', 'mine');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(pkg, 'package.json'), '{"type":"module"}');
    writeFileSync(join(pkg, 'data.txt'), 'package data');
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'SECRET');
    writeFileSync(
      join(pkg, 'dist', 'index.js'),
      "import { readFileSync } from 'node:fs';\n" +
        "const r = (p) => { try { return readFileSync(p, 'utf8'); } catch (e) { return e.code; } };\n" +
        `process.stdout.write([r(${JSON.stringify(join(pkg, 'data.txt'))}), r(${JSON.stringify(join(home, '.ssh', 'id_rsa'))})].join(';'));\n`,
    );
    const confinement = resolveConfinement(
      { mode: 'auto' },
      { sandboxRoot: sandbox, projectDir: project, hidden: [home] },
    );
    const launch = confinement.wrap(process.execPath, [join(pkg, 'dist', 'index.js')], sandbox);
    expect(mounts(launch.args)).toContainEqual(['--ro-bind', pkg, pkg]);
    const run = spawnSync(launch.command, launch.args, { encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('package data;ENOENT');
  });
});
