import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import type { Confinement } from '../../confinement/confinement.js';
import { REFUSED_SYSCALLS } from '../../confinement/seccomp-filter.js';

/** One `agents doctor` line proved from inside a confined process. */
export interface PrivilegeCheck {
  name: 'Privileges' | 'Namespaces' | 'Sockets';
  ok: boolean;
  detail: string;
}

const NAMESPACES = ['user', 'pid', 'ipc', 'mnt', 'net'] as const;

/**
 * What the probe does inside: reads its own status (capabilities, no_new_privs, seccomp mode)
 * and namespaces, tries what a hostile tool would (unmount the cover it is given, remount `/`
 * writable, setns, a nested user namespace: each through util-linux when installed) and lists
 * the Unix sockets it can see in the host's socket folders. Results only, as JSON.
 */
const PROBE = `
const fs = require('fs'), cp = require('child_process');
const status = fs.readFileSync('/proc/self/status', 'utf8');
const field = (name) => (status.match(new RegExp('^' + name + ':\\\\s*(\\\\S+)', 'm')) || [])[1];
const ns = {};
for (const name of ${JSON.stringify(NAMESPACES)}) {
  try { ns[name] = fs.readlinkSync('/proc/self/ns/' + name); } catch {}
}
const attempt = (command, args) => {
  const result = cp.spawnSync(command, args, { stdio: 'ignore', timeout: 5000 });
  return result.error ? 'absent' : result.status === 0 ? 'succeeded' : 'refused';
};
const sockets = [];
const walk = (dir, depth) => {
  let entries;
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const entry of entries) {
    const path = dir + '/' + entry.name;
    if (entry.isSocket()) sockets.push(path);
    else if (entry.isDirectory() && depth < 4) walk(path, depth + 1);
  }
};
for (const dir of JSON.parse(process.env.AGENTS_PROBE_SOCKET_FOLDERS)) walk(dir, 0);
process.stdout.write(JSON.stringify({
  capEff: field('CapEff'), noNewPrivs: field('NoNewPrivs'), seccomp: field('Seccomp'), ns,
  umount: attempt('umount', ['-l', process.env.AGENTS_PROBE_COVER]),
  remount: attempt('mount', ['-o', 'remount,rw', '/']),
  setns: attempt('nsenter', ['--mount=/proc/self/ns/mnt', 'true']),
  nestedUserNamespace: attempt('unshare', ['--user', 'true']),
  sockets: sockets.slice(0, 20),
}));
`;

interface Seen {
  capEff?: string;
  noNewPrivs?: string;
  seccomp?: string;
  ns?: Partial<Record<(typeof NAMESPACES)[number], string>>;
  umount?: string;
  remount?: string;
  setns?: string;
  nestedUserNamespace?: string;
  sockets?: string[];
}

/**
 * Proves from inside a confined process that it has no privilege, namespaces of its own and no
 * host socket in sight: the `Privileges`, `Namespaces` and `Sockets` lines of `agents doctor`.
 * `cover` is a folder the confinement hides with a tmpfs (its unmount must fail);
 * `socketFolders` are the host's socket folders as the host sees them.
 */
export function privilegeChecks(
  confinement: Confinement,
  sandbox: string,
  cover: string,
  socketFolders: readonly string[],
): PrivilegeCheck[] {
  const launch = confinement.wrap(process.execPath, ['-e', PROBE], sandbox);
  const result = spawnSync(launch.command, launch.args, {
    encoding: 'utf8',
    timeout: 30_000,
    env: {
      ...process.env,
      AGENTS_PROBE_COVER: cover,
      AGENTS_PROBE_SOCKET_FOLDERS: JSON.stringify(socketFolders),
    },
  });
  let seen: Seen;
  try {
    seen = JSON.parse(result.stdout) as Seen;
  } catch {
    const why = `the confined probe did not run (exit ${String(result.status)}${result.stderr ? `: ${result.stderr.trim().split('\n').slice(-2).join(' ')}` : ''})`;
    return (['Privileges', 'Namespaces', 'Sockets'] as const).map((name) => ({
      name,
      ok: false,
      detail: why,
    }));
  }
  return [privileges(seen), namespaces(seen, confinement.network), sockets(seen, socketFolders)];
}

function privileges(seen: Seen): PrivilegeCheck {
  const problems: string[] = [];
  if (seen.capEff === undefined || !/^0+$/.test(seen.capEff))
    problems.push(`capabilities CapEff ${seen.capEff ?? 'unknown'}`);
  if (seen.noNewPrivs !== '1') problems.push('no_new_privs is off');
  if (seen.seccomp !== '2') problems.push('no seccomp filter');
  const attempts = {
    'unmounting a covering mount': seen.umount,
    'remounting / writable': seen.remount,
    setns: seen.setns,
    'a nested user namespace': seen.nestedUserNamespace,
  };
  const refused: string[] = [];
  const untested: string[] = [];
  for (const [what, outcome] of Object.entries(attempts)) {
    if (outcome === 'succeeded') problems.push(`${what} SUCCEEDED`);
    else if (outcome === 'refused') refused.push(what);
    else untested.push(what);
  }
  if (problems.length > 0)
    return {
      name: 'Privileges',
      ok: false,
      detail: `a confined process keeps privilege: ${problems.join('; ')}`,
    };
  return {
    name: 'Privileges',
    ok: true,
    detail:
      `CapEff ${seen.capEff}, no_new_privs, seccomp filter on (${REFUSED_SYSCALLS.length} calls refused); refused: ${refused.join(', ')}` +
      (untested.length === 0 ? '' : ` (not tried, util-linux missing: ${untested.join(', ')})`),
  };
}

function namespaces(seen: Seen, network: boolean): PrivilegeCheck {
  const own: string[] = [];
  const shared: string[] = [];
  for (const name of NAMESPACES) {
    let host: string | undefined;
    try {
      host = readlinkSync(`/proc/self/ns/${name}`);
    } catch {
      host = undefined;
    }
    const inside = seen.ns?.[name];
    if (inside !== undefined && host !== undefined && inside !== host) own.push(name);
    else shared.push(name);
  }
  // The network namespace is shared on purpose when the server has network (the default).
  const required = ['user', 'pid', 'ipc', 'mnt', ...(network ? [] : ['net'])];
  const missing = required.filter((name) => !own.includes(name));
  return missing.length > 0
    ? {
        name: 'Namespaces',
        ok: false,
        detail: `a confined process shares the host's ${missing.join(', ')} namespace(s)`,
      }
    : {
        name: 'Namespaces',
        ok: true,
        detail: `own ${own.join(', ')}${shared.length === 0 ? '' : `; shared: ${shared.join(', ')} (network on)`}`,
      };
}

function sockets(seen: Seen, folders: readonly string[]): PrivilegeCheck {
  const found = seen.sockets ?? [];
  return found.length > 0
    ? {
        name: 'Sockets',
        ok: false,
        detail: `a confined process sees host sockets: ${found.join(', ')}`,
      }
    : {
        name: 'Sockets',
        ok: true,
        detail: `no Unix socket visible under ${folders.join(', ')}`,
      };
}
