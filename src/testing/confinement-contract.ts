import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer as createTcpServer, type Server } from 'node:net';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  ConfinementBackend,
  ConfinementScope,
  NetworkAccess,
} from '../confinement/backend.js';
import type { Contract, ContractCase } from './contract.js';

/** What {@link confinementContract} runs a backend with. */
export interface ConfinementContractOptions {
  backend: ConfinementBackend;
  /** The backend's settings (default `{ type: backend.type }`). */
  settings?: { type: string; [setting: string]: unknown };
  /**
   * Folder the scratch layout (sandbox, project, hidden state folder, socket folder) is made in.
   * Default the temp folder; pass one outside `/tmp` so a backend with a private `/tmp` cannot
   * pass the hiding checks by that alone.
   */
  root?: string;
}

/** A confinement contract: make the layout and run the probe once, then check each case. */
export type ConfinementContract = Contract;

// Runs inside the confinement: every attempt, each answered with `ok` or the error code.
const PROBE = `
const fs = require('fs'), net = require('net'), dgram = require('dgram'), cp = require('child_process');
const p = JSON.parse(process.argv[1]);
const out = {};
const attempt = (name, fn) => { try { const v = fn(); out[name] = v === undefined ? 'ok' : v; } catch (e) { out[name] = e.code || String(e.message); } };
attempt('readOwn', () => fs.readFileSync(p.sandbox + '/own.txt', 'utf8'));
attempt('writeOwn', () => fs.writeFileSync(p.sandbox + '/made.txt', 'made'));
attempt('readSecret', () => fs.readFileSync(p.secret, 'utf8'));
attempt('listHidden', () => fs.readdirSync(p.hidden).join(','));
attempt('writeOutside', () => fs.writeFileSync(p.outside + '/planted.txt', 'x'));
attempt('writeProject', () => fs.writeFileSync(p.project + '/keep.txt', 'overwritten'));
attempt('readViaLink', () => fs.readFileSync(p.sandbox + '/secret-link', 'utf8'));
attempt('writeViaLink', () => fs.writeFileSync(p.sandbox + '/outside-link/through-link.txt', 'x'));
attempt('writeTmp', () => fs.writeFileSync(p.tmpMark, 'x'));
attempt('signal', () => { process.kill(p.victim, p.signal); });
attempt('status', () => {
  const s = fs.readFileSync('/proc/self/status', 'utf8');
  const f = (k) => (new RegExp('^' + k + ':\\\\s*(\\\\S+)', 'm').exec(s) || [])[1];
  return [f('CapEff'), f('NoNewPrivs'), f('Seccomp')].join(' ');
});
attempt('nestedUserNs', () => { const r = cp.spawnSync('unshare', ['--user', '--map-root-user', 'true']); return r.error ? r.error.code : r.status === 0 ? 'ok' : 'refused'; });
const connect = (opts) => new Promise((resolve) => {
  const s = net.connect(opts);
  const t = setTimeout(() => { s.destroy(); resolve('TIMEOUT'); }, 1500);
  s.on('connect', () => { clearTimeout(t); s.destroy(); resolve('ok'); });
  s.on('error', (e) => { clearTimeout(t); resolve(e.code || e.message); });
});
(async () => {
  out.hostSocket = await connect({ path: p.socket });
  out.tcp = await connect({ host: '127.0.0.1', port: p.tcpPort });
  out.udp = await new Promise((resolve) => {
    const u = dgram.createSocket('udp4');
    u.on('error', (e) => { u.close(); resolve(e.code); });
    u.send('confined-udp', p.udpPort, '127.0.0.1', (e) => { u.close(); resolve(e ? e.code : 'sent'); });
  });
  process.stdout.write(JSON.stringify(out), () => process.exit(0));
})();
`;

/**
 * The confinement contract: what a process a backend confines can read, write, reach and
 * signal, and the attacks of the confinement issues (privileges, host sockets, escaping paths,
 * planted links), each checked against the backend's declared `guarantees`. What every backend
 * must hold: its sandbox readable and writable; no write outside it (the project on the host
 * unchanged, through an absolute path or a planted link); the state folder's secret unreadable,
 * directly or through a link; no pathname host socket reachable. A declared gap (a guarantee
 * `false`) is checked to be real, so a declaration is never wrong either way. Preconditions (the
 * listeners answer on the host, the victim process runs, the secret is readable unconfined) are
 * asserted first. Framework-neutral: register `cases` with your runner (see
 * `test/integration/confinement-contract.int.test.ts`).
 */
export function confinementContract(options: ConfinementContractOptions): ConfinementContract {
  const { backend } = options;
  const settings = options.settings ?? { type: backend.type };
  const network: NetworkAccess = backend.guarantees.network.includes('none') ? 'none' : 'open';
  let base = '';
  let out: Record<string, string> = {};
  let udpReceived = false;
  const closers: Array<() => unknown> = [];
  const paths = {} as Record<string, string | number>;

  const setup = async (): Promise<void> => {
    base = await mkdtemp(join(options.root ?? tmpdir(), 'agents-confinement-contract-'));
    const dir = (name: string) => join(base, name);
    for (const name of ['project', 'state', 'state/run', 'sandbox', 'outside', 'sockets'])
      await mkdir(dir(name), { recursive: true });
    await writeFile(join(dir('project'), 'keep.txt'), 'the user file');
    await writeFile(join(dir('state'), 'run', 'secret.txt'), 'planted secret');
    await writeFile(join(dir('sandbox'), 'own.txt'), 'own');
    await symlink(join(dir('state'), 'run', 'secret.txt'), join(dir('sandbox'), 'secret-link'));
    await symlink(dir('outside'), join(dir('sandbox'), 'outside-link'));
    const socket = join(dir('sockets'), 'host.sock');
    const unix = await listen(
      createTcpServer((c) => c.end()),
      { path: socket },
    );
    const tcp = await listen(
      createTcpServer((c) => c.end()),
      { host: '127.0.0.1', port: 0 },
    );
    const udp: UdpSocket = createSocket('udp4');
    udp.on('message', () => (udpReceived = true));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const victim: ChildProcess = spawn('sleep', ['60'], { stdio: 'ignore' });
    closers.push(
      () => unix.close(),
      () => tcp.close(),
      () => udp.close(),
      () => victim.kill('SIGKILL'),
    );
    Object.assign(paths, {
      sandbox: dir('sandbox'),
      project: dir('project'),
      secret: join(dir('state'), 'run', 'secret.txt'),
      hidden: join(dir('state'), 'run'),
      outside: dir('outside'),
      socket,
      tcpPort: (tcp.address() as { port: number }).port,
      udpPort: udp.address().port,
      victim: victim.pid!,
      tmpMark: join(tmpdir(), `agents-contract-${process.pid}-${Date.now()}`),
    });
    closers.push(() => rm(String(paths['tmpMark']), { force: true }));
    // Preconditions: everything the confined probe must fail to reach works unconfined.
    // Signal 0 only asks whether the victim may be signalled: it stays alive for the real probe.
    const host = spawnSync(
      process.execPath,
      ['-e', PROBE, JSON.stringify({ ...paths, signal: 0 })],
      {
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    const unconfined = JSON.parse(host.stdout) as Record<string, string>;
    for (const key of ['readSecret', 'writeOutside', 'hostSocket', 'tcp', 'readViaLink', 'signal'])
      expectEqual(
        `unconfined ${key} (precondition)`,
        unconfined[key] === 'ok' || unconfined[key] === 'planted secret',
        true,
      );
    await rm(join(dir('outside'), 'planted.txt'), { force: true });
    await rm(join(dir('outside'), 'through-link.txt'), { force: true });
    await rm(String(paths['tmpMark']), { force: true });
    await writeFile(join(dir('project'), 'keep.txt'), 'the user file');
    udpReceived = false;
    if (victim.exitCode !== null || victim.signalCode !== null) {
      throw new Error('precondition: the victim process must still run before the confined probe');
    }
    const found = backend.probe(settings, network);
    if (!found.available) throw new Error(`${backend.type} is not available here: ${found.reason}`);
    const scope: ConfinementScope = {
      sandboxRoot: dir('sandbox'),
      projectDir: dir('project'),
      hidden: [dir('state')],
      sockets: [dir('sockets')],
      stateDir: dir('state'),
      guarded: [dir('state')],
    };
    const launch = backend.launch(found.path, {
      scope,
      command: process.execPath,
      args: ['-e', PROBE, JSON.stringify({ ...paths, signal: 'SIGTERM' })],
      cwd: undefined,
      network,
    });
    const confined = spawnSync(launch.command, launch.args, { encoding: 'utf8', timeout: 30_000 });
    if (confined.status !== 0)
      throw new Error(`the confined probe failed (${confined.status}): ${confined.stderr}`);
    out = JSON.parse(confined.stdout) as Record<string, string>;
    await new Promise((resolve) => setTimeout(resolve, 100)); // a UDP datagram in flight
  };

  const g = backend.guarantees;
  const gap = (held: boolean, label: string) => (held ? label : `${label} (declared gap)`);
  const cases: ContractCase[] = [
    check('reads and writes its own sandbox', () => {
      expectEqual('read own', out['readOwn'], 'own');
      expectEqual('write own', out['writeOwn'], 'ok');
      expectEqual(
        'written on the host',
        readFileSync(join(String(paths['sandbox']), 'made.txt'), 'utf8'),
        'made',
      );
    }),
    check('cannot write outside the sandbox, directly or through a planted link', () => {
      expectRefused('write outside', out['writeOutside']);
      expectRefused('write through a link', out['writeViaLink']);
      expectEqual(
        'nothing landed outside',
        existsSync(join(String(paths['outside']), 'planted.txt')) ||
          existsSync(join(String(paths['outside']), 'through-link.txt')),
        false,
      );
    }),
    check('leaves the user project unchanged on the host, whatever its absolute path', async () => {
      expectEqual(
        'project file',
        await readFile(join(String(paths['project']), 'keep.txt'), 'utf8'),
        'the user file',
      );
      if (g.sandboxAtProjectPath)
        expectEqual('write at the project path lands in the sandbox', out['writeProject'], 'ok');
      else expectRefused('write at the project path', out['writeProject']);
    }),
    check('cannot read the state folder, directly or through a link planted in the sandbox', () => {
      expectRefused('read the secret', out['readSecret']);
      expectRefused('read through a link', out['readViaLink']);
      if (g.hiddenReadsEmpty)
        expectEqual(
          'hidden folder lists empty',
          out['listHidden'] === '' || out['listHidden'] === 'ENOENT',
          true,
        );
      else expectRefused('list the hidden folder', out['listHidden']);
    }),
    check(
      gap(g.hostSocketsUnreachable, 'reaches no pathname Unix socket in the host socket folders'),
      () => {
        if (g.hostSocketsUnreachable)
          expectRefused('connect to the host socket', out['hostSocket']);
        else expectEqual('connect to the host socket', out['hostSocket'], 'ok');
      },
    ),
    check(
      gap(
        g.privilegesDropped,
        'holds no privilege: CapEff 0, no_new_privs, seccomp filter; no nested user namespace',
      ),
      () => {
        const [capEff, noNewPrivs, seccomp] = (out['status'] ?? '').split(' ');
        const dropped = capEff === '0000000000000000' && noNewPrivs === '1' && seccomp === '2';
        expectEqual(`status ${out['status']}`, dropped, g.privilegesDropped);
        if (g.privilegesDropped) expectRefused('nested user namespace', out['nestedUserNs']);
      },
    ),
    check(gap(g.processesIsolated, 'cannot signal a host process'), () => {
      if (g.processesIsolated) expectRefused('SIGTERM to a host process', out['signal']);
      else expectEqual('SIGTERM to a host process', out['signal'], 'ok');
    }),
    check(gap(g.privateTmp, 'has a private /tmp'), () => {
      expectEqual(
        'a /tmp file seen on the host',
        existsSync(String(paths['tmpMark'])),
        !g.privateTmp && out['writeTmp'] === 'ok',
      );
    }),
    check(gap(network === 'none', 'network none: no TCP connection to the host'), () => {
      if (network === 'none') expectRefused('TCP to a host listener', out['tcp']);
      else expectEqual('TCP to a host listener', out['tcp'], 'ok');
    }),
    check(
      gap(
        network === 'none' && g.networkNoneIsTotal,
        'network none: no UDP datagram reaches the host',
      ),
      () => {
        expectEqual(
          'a UDP datagram arrived',
          udpReceived,
          !(network === 'none' && g.networkNoneIsTotal),
        );
      },
    ),
  ];

  const teardown = async (): Promise<void> => {
    for (const close of closers.splice(0)) await close();
    if (base !== '') await rm(base, { recursive: true, force: true });
  };
  return { setup, cases, teardown };
}

function check(name: string, fn: () => void | Promise<void>): ContractCase {
  return { name, run: async () => void (await fn()) };
}

function expectEqual(what: string, actual: unknown, expected: unknown): void {
  if (actual !== expected)
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** An attempt that failed (any error code, or a probe answer other than success). */
function expectRefused(what: string, result: string | undefined): void {
  if (result === undefined || result === 'ok' || result === 'planted secret' || result === 'sent')
    throw new Error(
      `${what}: the confined process succeeded (${String(result)}); it must be refused`,
    );
}

function listen(
  server: Server,
  at: { path: string } | { host: string; port: number },
): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(at, () => resolve(server));
  });
}
