import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type {
  ConfinementBackend,
  ConfinementCheck,
  ConfinementProbe,
  LaunchRequest,
  NetworkAccess,
} from './backend.js';
import { bubblewrapMounts } from './bubblewrap-mounts.js';
import {
  launchWithSeccomp,
  PRIVILEGE_ARGUMENTS,
  SECCOMP_ARGUMENTS,
} from './bubblewrap-privilege.js';
import { findExecutable } from './server-files.js';
import type { BubblewrapSettings } from './settings.js';

/** The fix named in messages when bubblewrap is missing. */
export const BUBBLEWRAP_INSTALL_HINT = 'apt-get install bubblewrap';

/**
 * The bubblewrap confinement backend (Linux): user, mount, pid and IPC namespaces with every
 * capability dropped and a seccomp filter, the file system read-only, the sandbox writable (at
 * the project's path too), hidden folders empty, host socket folders private, the network cut
 * or reached only through the proxy (see {@link bubblewrapArguments}).
 */
export const bubblewrapBackend: ConfinementBackend<BubblewrapSettings> = {
  type: 'bubblewrap',
  platforms: ['linux'],
  installHint: BUBBLEWRAP_INSTALL_HINT,
  guarantees: {
    network: ['none', 'proxy', 'open'],
    networkNoneIsTotal: true,
    processesIsolated: true,
    hiddenReadsEmpty: true,
    sandboxAtProjectPath: true,
    privilegesDropped: true,
    privateTmp: true,
    hostSocketsUnreachable: true,
  },
  probe: (settings, network) =>
    probeBubblewrap({
      network: network === 'open',
      ...(settings.path === undefined ? {} : { bwrapPath: settings.path }),
    }),
  launch: (path, request) => launchWithSeccomp(path, bubblewrapArguments(request)),
  hides: (scope) => [...(scope.hidden ?? [])],
  doctorChecks: (settings) => [checkBubblewrap(settings.path)],
};

/**
 * The whole bubblewrap command line (without the bwrap executable) for one server: namespaces
 * and privileges, the mounts (`bubblewrapMounts`), variables, then `--chdir` and what runs.
 */
export function bubblewrapArguments(request: LaunchRequest): string[] {
  const run = request.entry ?? { command: request.command, args: request.args };
  return [
    ...baseArguments(request.network),
    ...bubblewrapMounts(request),
    ...Object.entries(request.env ?? {}).flatMap(([key, value]) => ['--setenv', key, value]),
    '--chdir',
    request.cwd ?? request.scope.sandboxRoot,
    '--',
    run.command,
    ...run.args,
  ];
}

/** The sysctl that turns unprivileged user namespaces off, when one does. */
function userNamespaceHint(): string {
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return '';
    }
  };
  if (read('/proc/sys/kernel/unprivileged_userns_clone') === '0')
    return 'enable user namespaces: `sysctl -w kernel.unprivileged_userns_clone=1`';
  if (read('/proc/sys/user/max_user_namespaces') === '0')
    return 'enable user namespaces: `sysctl -w user.max_user_namespaces=15000`';
  if (read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1')
    return 'AppArmor restricts user namespaces (Ubuntu 24.04+): `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or an AppArmor profile for bwrap';
  return 'in a container, run it with user namespaces allowed (e.g. docker --security-opt seccomp=unconfined), or set confine: off and accept unconfined servers';
}

/** `agents doctor`'s line about bubblewrap: found and working, or the install or kernel fix. */
function checkBubblewrap(bwrapPath: string | undefined): ConfinementCheck {
  const probe = probeBubblewrap(bwrapPath === undefined ? {} : { bwrapPath });
  if (probe.available)
    return {
      name: 'bubblewrap',
      status: 'ok',
      detail: `${probe.path} makes sandboxes (user namespaces work)`,
    };
  const missing = probe.reason.includes('was not found');
  return {
    name: 'bubblewrap',
    status: 'warn',
    detail: `${probe.reason}; stdio servers run unconfined (confine: required refuses to start them)`,
    fix: missing ? `install it: \`${BUBBLEWRAP_INSTALL_HINT}\`` : userNamespaceHint(),
  };
}

/** The result of probing for bubblewrap. */
export type BubblewrapProbe = ConfinementProbe;

// Probes cost one spawn (~10 ms): once per binary and network setting per process.
const probes = new Map<string, BubblewrapProbe>();

/**
 * Finds bubblewrap and checks that it can make the namespaces we use (in some containers user
 * or mount namespaces are off). Cached per process.
 */
export function probeBubblewrap(
  options: { bwrapPath?: string; network?: boolean } = {},
): BubblewrapProbe {
  const network = options.network ?? true;
  const name = options.bwrapPath ?? 'bwrap';
  const key = `${name}\0${String(network)}\0${process.env['PATH'] ?? ''}`;
  const known = probes.get(key);
  if (known !== undefined) return known;
  const probe = runProbe(name, network);
  probes.set(key, probe);
  return probe;
}

function runProbe(name: string, network: boolean): BubblewrapProbe {
  const platforms = bubblewrapBackend.platforms;
  if (!platforms.includes(process.platform)) {
    return {
      available: false,
      reason: `OS confinement uses bubblewrap, which runs on ${platforms.join(', ')} only (this is ${process.platform})`,
    };
  }
  const path = findExecutable(name);
  if (path === undefined) {
    return {
      available: false,
      reason: `bubblewrap ("${name}") was not found${name.includes('/') ? '' : ' on PATH'}; install it with \`${BUBBLEWRAP_INSTALL_HINT}\``,
    };
  }
  // Exactly the namespaces, privileges, filter and mounts a server gets, around a command that
  // always exists.
  const launch = launchWithSeccomp(path, [
    ...baseArguments(network ? 'open' : 'none'),
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--',
    process.execPath,
    '--version',
  ]);
  const result = spawnSync(launch.command, launch.args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10_000,
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    const stderr = (result.stderr ?? '').trim().split('\n').slice(-2).join(' ');
    return {
      available: false,
      reason: `bubblewrap (${path}) cannot create a sandbox here${stderr ? ` (${stderr})` : ''}; user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1) or the container lacks the permission`,
    };
  }
  return { available: true, path };
}

/** Namespaces, privileges and the seccomp filter (see `bubblewrap-privilege.ts`). */
function baseArguments(network: NetworkAccess): string[] {
  return [
    '--die-with-parent',
    ...PRIVILEGE_ARGUMENTS,
    // `proxy`: no network of its own either; the proxy's socket is bound in.
    ...(network === 'open' ? [] : ['--unshare-net']),
    ...SECCOMP_ARGUMENTS,
  ];
}
