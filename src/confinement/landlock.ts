import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import type { ConfinementBackend, ConfinementProbe, LaunchRequest } from './backend.js';
import { seccompFilterFile } from './seccomp-file.js';
import type { LandlockSettings } from './settings.js';
import { filesLinkedInto } from './sockets.js';
import {
  existingReal,
  expandAll,
  findExecutable,
  isWithin,
  realOrResolved,
  refuseUnsafeServerPaths,
  serverFolders,
} from './server-files.js';

/**
 * The Landlock backend (Linux 6.12+, no namespaces, works where user namespaces are off): a few
 * lines of Python (stdlib `ctypes`, no build step, Debian's `python3-minimal`) set no_new_privs,
 * drop every capability, restrict the file system to what the request allows (read: everything
 * but the hidden and socket folders, plus what the server needs back; write: the sandbox, a
 * private TMPDIR, its exceptions), cut TCP for `network: none`, scope signals and abstract Unix
 * sockets to the server, install the same seccomp filter as bubblewrap, then exec the server.
 * What it cannot do, declared in `guarantees`: a pathname Unix socket stays reachable (Landlock
 * does not mediate `connect()` on this kernel), UDP is not cut, no proxy (no mount to put the
 * proxy socket where the forwarder expects it), hidden folders refuse access instead of reading
 * empty, the project stays read-only at its path (no mount to put the sandbox there), `/tmp` is
 * shared (read-only).
 */
export const landlockBackend: ConfinementBackend<LandlockSettings> = {
  type: 'landlock',
  platforms: ['linux'],
  installHint: 'apt-get install python3-minimal',
  onlyWhenNamed: true,
  guarantees: {
    network: ['none', 'open'],
    networkNoneIsTotal: false,
    processesIsolated: true,
    hiddenReadsEmpty: false,
    sandboxAtProjectPath: false,
    privilegesDropped: true,
    privateTmp: false,
    hostSocketsUnreachable: false,
  },
  probe: (settings) => probeLandlock(settings.python ?? DEFAULT_PYTHON),
  launch: (path, request) => ({ command: path, args: landlockArguments(request) }),
  hides: (scope) => [...(scope.hidden ?? []), ...(scope.sockets ?? [])],
  doctorChecks: (settings) => {
    const probe = probeLandlock(settings.python ?? DEFAULT_PYTHON);
    return [
      probe.available
        ? { name: 'landlock', status: 'ok', detail: `${probe.path} applies Landlock rules` }
        : {
            name: 'landlock',
            status: 'warn',
            detail: probe.reason,
            fix: probe.fix ?? 'apt-get install python3-minimal',
          },
    ];
  },
};

const DEFAULT_PYTHON = '/usr/bin/python3';
const MIN_ABI = 6; // signal and abstract-socket scoping (Linux 6.12)

const probes = new Map<string, ConfinementProbe>();

function probeLandlock(python: string): ConfinementProbe {
  const known = probes.get(python);
  if (known !== undefined) return known;
  const path = findExecutable(python);
  let probe: ConfinementProbe;
  if (path === undefined) {
    probe = {
      available: false,
      reason: `python3 ("${python}") was not found; the Landlock helper needs it`,
      fix: 'apt-get install python3-minimal',
    };
  } else {
    const spec = {
      read: ['/'],
      write: [],
      network: 'none',
      seccomp: seccompFilterFile(),
      env: {},
      cwd: '/',
    };
    const result = spawnSync(
      path,
      ['-I', '-S', '-c', HELPER, JSON.stringify(spec), process.execPath, '--version'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 10_000,
        encoding: 'utf8',
      },
    );
    probe =
      result.status === 0
        ? { available: true, path }
        : {
            available: false,
            reason: `Landlock (ABI ${MIN_ABI}+, Linux 6.12+) cannot confine here: ${(result.stderr ?? '').trim().split('\n').slice(-1)[0] ?? 'no reason given'}`,
          };
  }
  probes.set(python, probe);
  return probe;
}

/** The helper's arguments: `-I -S -c HELPER SPEC COMMAND ARGS...` (paths travel as JSON, never as code). */
export function landlockArguments(request: LaunchRequest): string[] {
  const { scope, command, args } = request;
  refuseUnsafeServerPaths(request, command, args);
  const sandbox = realOrResolved(scope.sandboxRoot);
  const cwd = request.cwd === undefined ? sandbox : realOrResolved(request.cwd);
  // A hidden folder holding the sandbox stays hidden: the sandbox's own rule lets it through.
  const hidden = existingReal([...(scope.hidden ?? []), ...(scope.sockets ?? [])]).filter(
    (path) => path !== sep && path !== sandbox,
  );
  const run = request.entry ?? { command, args };
  const read = [
    ...visibleAround(hidden),
    ...serverFolders(command, args, scope.sandboxRoot),
    ...serverFolders(run.command, run.args, scope.sandboxRoot),
    ...(scope.projectDir === undefined ? [] : existingReal([scope.projectDir])),
    cwd,
    ...existingReal(scope.readable ?? []),
    ...filesLinkedInto(existingReal(scope.sockets ?? [])),
    ...existingReal(expandAll(request.exceptions?.readOnly)),
  ];
  const tmp = privateTmp();
  const write = [
    sandbox,
    tmp,
    ...existingReal(expandAll(request.exceptions?.writable)),
    ...(request.writable ?? []),
  ];
  const spec = {
    read: [...new Set(read)],
    write,
    network: request.network,
    seccomp: seccompFilterFile(),
    env: { ...request.env, TMPDIR: tmp },
    cwd: request.cwd ?? scope.sandboxRoot,
  };
  return ['-I', '-S', '-c', HELPER, JSON.stringify(spec), run.command, ...run.args];
}

/**
 * Landlock only allows (a rule can never take back what a rule above grants), so "all but the
 * hidden folders" is every entry of each hidden folder's ancestors except the way down to it. A
 * link among those entries counts where it points, and is left out when that is hidden.
 */
function visibleAround(hidden: readonly string[]): string[] {
  if (hidden.length === 0) return [sep];
  const covered = (path: string) => hidden.some((h) => path === h || isWithin(path, h));
  const ancestors = new Set<string>();
  for (const path of hidden)
    for (let at = dirname(path); ; at = dirname(at)) {
      ancestors.add(at);
      if (at === dirname(at)) break;
    }
  const visible: string[] = [];
  for (const folder of ancestors) {
    if (covered(folder)) continue;
    let names: string[] = [];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      let path = join(folder, name);
      if (ancestors.has(path) || covered(path)) continue;
      try {
        if (lstatSync(path).isSymbolicLink()) path = realpathSync.native(path);
      } catch {
        continue; // a dangling link grants nothing
      }
      if (covered(path) || ancestors.has(path) || hidden.some((h) => isWithin(h, path))) continue;
      visible.push(path);
    }
  }
  return visible;
}

let tmpRoot: string | undefined;
/** A TMPDIR of the server's own (`/tmp` stays shared and read-only), removed when the host exits. */
function privateTmp(): string {
  if (tmpRoot === undefined) {
    const root = mkdtempSync(join(tmpdir(), 'agents-landlock-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    tmpRoot = root;
  }
  return mkdtempSync(join(tmpRoot, 'server-'));
}

// Runs before the server: applies the spec (argv[1]) to itself, then execs argv[2:].
const HELPER = `
import ctypes, json, os, platform, stat, struct, sys
spec = json.loads(sys.argv[1]); argv = sys.argv[2:]
with open(spec['seccomp'], 'rb') as f: code = f.read()  # before the rules hide its folder
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def fail(what):
    e = ctypes.get_errno(); sys.stderr.write('landlock helper: %s: %s\\n' % (what, os.strerror(e))); sys.exit(126)
def prctl(*a):
    return libc.prctl(*[ctypes.c_ulong(x) for x in a])
arm = platform.machine() in ('aarch64', 'arm64')
abi = libc.syscall(444, None, 0, 1)
if abi < ${MIN_ABI}: sys.stderr.write('landlock helper: kernel Landlock ABI %d < ${MIN_ABI}\\n' % abi); sys.exit(126)
if prctl(38, 1, 0, 0, 0) != 0: fail('no_new_privs')
for cap in range(64): prctl(24, cap, 0, 0, 0)
prctl(47, 4, 0, 0, 0)
READ = 1 | 4 | 8
FILE = 1 | 2 | 4 | (1 << 14) | (1 << 15)
ALL = (1 << 16) - 1
net = 3 if spec['network'] == 'none' else 0
attr = struct.pack('QQQ', ALL, net, 3)
fd = libc.syscall(444, attr, len(attr), 0)
if fd < 0: fail('create_ruleset')
def allow(path, access):
    try: pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError: return
    if not stat.S_ISDIR(os.fstat(pfd).st_mode): access &= FILE
    rule = struct.pack('=Qi', access, pfd)
    if libc.syscall(445, fd, 1, rule, 0) != 0: fail('add_rule ' + path)
    os.close(pfd)
for p in spec['read']: allow(p, READ)
for p in spec['write']: allow(p, ALL)
for p in ('/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty'): allow(p, READ | 2 | (1 << 14))
if libc.syscall(446, fd, 0) != 0: fail('restrict_self')
hdr = struct.pack('Ii', 0x20080522, 0); data = bytes(24)
if libc.syscall(91 if arm else 126, hdr, data) != 0: fail('capset')
buf = ctypes.create_string_buffer(code, len(code))
prog = ctypes.create_string_buffer(struct.pack('HxxxxxxP', len(code) // 8, ctypes.addressof(buf)), 16)
if prctl(22, 2, ctypes.addressof(prog), 0, 0) != 0: fail('seccomp')
os.chdir(spec['cwd'])
env = dict(os.environ); env.update(spec['env'])
try: os.execvpe(argv[0], argv, env)
except OSError as e: sys.stderr.write('landlock helper: %s: %s\\n' % (argv[0], e.strerror)); sys.exit(127)
`;
