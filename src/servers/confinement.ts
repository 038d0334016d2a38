import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ServerNetworkHook } from './network/server-network.js';

/**
 * How stdio servers are confined: `auto` confines where the OS allows it and says once when it
 * cannot; `required` refuses to start a server unconfined; `off` never confines.
 */
export type ConfineMode = 'auto' | 'required' | 'off';

/** Confinement settings (the actor's `sandbox.confine` / `sandbox.network`). */
export interface ConfinementSettings {
  mode: ConfineMode;
  /** Network access for confined servers. Default true; false gives them loopback only. */
  network?: boolean;
  /** The bubblewrap executable: a path, or a name looked up on PATH. Default `bwrap`. */
  bwrapPath?: string;
  /** Per-server network (host lists, the proxy); without it every server gets `network`. */
  networkHook?: ServerNetworkHook;
}

/** What a confined server may see and change. */
export interface ConfinementScope {
  /** The sandbox working tree: the only place a server may write (besides a private /tmp). */
  sandboxRoot: string;
  /**
   * The user's project folder. When the sandbox lies outside it, the sandbox is mounted at
   * this path too, so an absolute project path a tool was given lands in the sandbox.
   */
  projectDir?: string;
  /** Folders hidden from servers (an empty tmpfs over each): the workspace, state folders. */
  hidden?: readonly string[];
}

/** A command line to spawn instead of the server's own. */
export interface WrappedCommand {
  command: string;
  args: string[];
}

/**
 * The confinement chosen for one actor activation. `wrap()` is pure and cheap (argv building
 * only); the probing happened when it was resolved.
 */
export interface Confinement {
  /** `bubblewrap` when servers run confined, `none` otherwise. */
  readonly kind: 'bubblewrap' | 'none';
  /** Why servers are not confined (absent when they are, or when the mode is `off`). */
  readonly reason?: string;
  /** Whether confined servers have network access. */
  readonly network: boolean;
  /** The per-server network hook, when the actor has one (remote servers use it too). */
  readonly networkHook?: ServerNetworkHook;
  /**
   * The command line that runs `command args` confined (or unchanged for `none`).
   *
   * @throws AgentsError `CONFINEMENT_UNAVAILABLE` when the server has network host lists and
   *   cannot be confined or its proxy is not running.
   */
  wrap(
    command: string,
    args: readonly string[],
    cwd: string | undefined,
    serverName?: string,
  ): WrappedCommand;
}

/** The fix named in messages when bubblewrap is missing. */
export const BUBBLEWRAP_INSTALL_HINT = 'apt-get install bubblewrap';

/** The result of probing for bubblewrap. */
export type BubblewrapProbe =
  { available: true; path: string } | { available: false; reason: string };

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
  if (process.platform !== 'linux') {
    return {
      available: false,
      reason:
        process.platform === 'darwin'
          ? 'OS confinement uses bubblewrap, which exists on Linux only; on macOS servers run unconfined (sandbox-exec is not used yet)'
          : `OS confinement uses bubblewrap, which exists on Linux only (this is ${process.platform})`,
    };
  }
  const path = findExecutable(name);
  if (path === undefined) {
    return {
      available: false,
      reason: `bubblewrap ("${name}") was not found${name.includes('/') ? '' : ' on PATH'}; install it with \`${BUBBLEWRAP_INSTALL_HINT}\``,
    };
  }
  // Exactly the namespaces and mounts a server gets, around a command that always exists.
  const result = spawnSync(
    path,
    [
      ...baseArguments(network),
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--',
      process.execPath,
      '--version',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000, encoding: 'utf8' },
  );
  if (result.status !== 0) {
    const stderr = (result.stderr ?? '').trim().split('\n').slice(-2).join(' ');
    return {
      available: false,
      reason: `bubblewrap (${path}) cannot create a sandbox here${stderr ? ` (${stderr})` : ''}; user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1) or the container lacks the permission`,
    };
  }
  return { available: true, path };
}

function baseArguments(network: boolean): string[] {
  return ['--die-with-parent', '--unshare-pid', ...(network ? [] : ['--unshare-net'])];
}

/** An executable by path, or by name on PATH; undefined when missing or not executable. */
function findExecutable(name: string): string | undefined {
  const candidates = name.includes('/')
    ? [resolve(name)]
    : (process.env['PATH'] ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

const NONE_OFF: Confinement = {
  kind: 'none',
  network: true,
  wrap: (command, args) => ({ command, args: [...args] }),
};

/**
 * Decides how this activation's stdio servers run. `off`: unconfined. `auto`: bubblewrap when
 * it works here, else unconfined with `reason` set (the caller says so once). `required`:
 * bubblewrap or an error.
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` in `required` mode when bubblewrap cannot run,
 *   naming why and the fix.
 */
export function resolveConfinement(
  settings: ConfinementSettings,
  scope: ConfinementScope,
): Confinement {
  const network = settings.network ?? true;
  const hook = settings.networkHook;
  // Unconfined: a server with host lists refuses to start (the hook throws); others run as is.
  const unconfined = (base: Confinement): Confinement =>
    hook === undefined
      ? base
      : {
          ...base,
          networkHook: hook,
          wrap: (command, args, _cwd, serverName) => {
            hook.launch(
              serverName,
              false,
              command,
              args,
              base.reason ?? 'sandbox.confine is "off"',
            );
            return { command, args: [...args] };
          },
        };
  if (settings.mode === 'off') return unconfined({ ...NONE_OFF, network });
  const probe = probeBubblewrap({
    network,
    ...(settings.bwrapPath === undefined ? {} : { bwrapPath: settings.bwrapPath }),
  });
  if (!probe.available) {
    if (settings.mode === 'required') {
      throw new AgentsError(
        AgentsErrorCode.ConfinementUnavailable,
        `Servers were not started: sandbox.confine is "required" but ${probe.reason}. ` +
          `Install bubblewrap (\`${BUBBLEWRAP_INSTALL_HINT}\`), or set sandbox.confine to "auto" to run servers unconfined where confinement is unavailable.`,
        { details: { reason: probe.reason, fix: BUBBLEWRAP_INSTALL_HINT } },
      );
    }
    return unconfined({ ...NONE_OFF, network, reason: probe.reason });
  }
  const prefix = bubblewrapArguments(scope);
  const bwrap = probe.path;
  return {
    kind: 'bubblewrap',
    network,
    ...(hook === undefined ? {} : { networkHook: hook }),
    wrap: (command, args, cwd, serverName) => {
      // The network hook decides per server: cut, open, or only through the proxy.
      const net = hook?.launch(serverName, true, command, args) ?? {
        unshareNet: !network,
        bwrapArgs: [],
        command,
        args: [...args],
      };
      return {
        command: bwrap,
        args: [
          ...prefix(command, args),
          ...(net.unshareNet ? ['--unshare-net'] : []),
          ...net.bwrapArgs,
          '--chdir',
          cwd ?? scope.sandboxRoot,
          '--',
          net.command,
          ...net.args,
        ],
      };
    },
  };
}

/**
 * The bubblewrap mounts for a scope, in order (later mounts cover earlier ones):
 * the whole file system read-only, fresh /dev and /proc, a private /tmp, hidden folders
 * (tmpfs), the sandbox over the project path (when the sandbox lies outside the project and
 * the server's own files do not live in the project), and the sandbox read-write at its own
 * path last. Returns a function of the server command line (its files decide the project bind).
 */
function bubblewrapArguments(
  scope: ConfinementScope,
): (command: string, args: readonly string[]) => string[] {
  const sandbox = realOrResolved(scope.sandboxRoot);
  const project = scope.projectDir === undefined ? undefined : realOrResolved(scope.projectDir);
  const canBindProject =
    project !== undefined &&
    project !== sandbox &&
    !isWithin(project, sandbox) &&
    !isWithin(sandbox, project) &&
    existsSync(project);
  const hidden = [
    ...new Set((scope.hidden ?? []).filter(existsSync).map((path) => realOrResolved(path))),
  ]
    // The sandbox itself is never hidden; folders the project bind covers need no tmpfs (and a
    // tmpfs there would create a mount point inside the sandbox).
    .filter((path) => path !== sandbox && !isWithin(sandbox, path))
    .filter((path) => !(canBindProject && (path === project || isWithin(path, project!))));
  const head = [
    // The network flag comes per server, after the mounts (see wrap()).
    ...baseArguments(true),
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    ...(existsSync('/var/tmp') ? ['--tmpfs', '/var/tmp'] : []),
  ];
  const hide = hidden.flatMap((path) => ['--tmpfs', path]);
  const tail = ['--bind', sandbox, sandbox];
  // The sandbox's own repository may borrow the user's objects (alternates naming
  // `<project>/.git/objects`): keep the user's git dir readable at its path, read-only, over the
  // sandbox's `.git` there. Only where both exist: a missing mount point would be created in
  // the sandbox.
  const userGit = canBindProject ? join(project!, '.git') : undefined;
  const keepUserGit =
    userGit !== undefined && isDirectory(userGit) && isDirectory(join(sandbox, '.git'));
  const projectBind = [
    '--bind',
    sandbox,
    project ?? '',
    ...(keepUserGit ? ['--ro-bind', userGit!, userGit!] : []),
  ];
  return (command, args) => {
    const bindProject =
      canBindProject && !serverFilesUnder(project!, command, args, scope.sandboxRoot);
    // The private /tmp would hide a server whose files live there (a project under /tmp, a
    // script unpacked there): those folders stay readable, read-only, over the tmpfs.
    const keep = serverFolders(command, args, scope.sandboxRoot)
      .map((folder) =>
        !bindProject && project !== undefined && (folder === project || isWithin(folder, project))
          ? project
          : folder,
      )
      .filter((folder) => TMPFS_ROOTS.some((root) => isWithin(folder, root)))
      .filter((folder) => folder !== sandbox && !isWithin(folder, sandbox));
    const keepBinds = [...new Set(keep)].flatMap((folder) => ['--ro-bind', folder, folder]);
    return [...head, ...keepBinds, ...hide, ...(bindProject ? projectBind : []), ...tail];
  };
}

const TMPFS_ROOTS = ['/tmp', '/var/tmp'];

/** The folders holding the server's executable and the absolute paths among its arguments. */
function serverFolders(command: string, args: readonly string[], cwd: string): string[] {
  const executable = command.includes('/') ? resolve(cwd, command) : findExecutable(command);
  return [executable, ...args.filter((arg) => isAbsolute(arg))]
    .filter((path): path is string => path !== undefined && existsSync(path))
    .map((path) => {
      const real = realOrResolved(path);
      const folder = isDirectory(real) ? real : dirname(real);
      // Under a private tmp root keep the whole top folder (a checkout in /tmp/x: the script's
      // imports resolve from /tmp/x/node_modules and /tmp/x/src).
      const root = TMPFS_ROOTS.find((tmp) => isWithin(folder, tmp));
      return root === undefined ? folder : join(root, folder.slice(root.length + 1).split(sep)[0]!);
    });
}

/**
 * True when the server's executable or an absolute path among its arguments lies in the
 * project: mounting the sandbox over the project would hide the server's own files, so the
 * project stays read-only instead.
 */
function serverFilesUnder(
  project: string,
  command: string,
  args: readonly string[],
  cwd: string,
): boolean {
  const executable = command.includes('/') ? resolve(cwd, command) : findExecutable(command);
  const paths = [executable, ...args.filter((arg) => isAbsolute(arg))];
  return paths.some((path) => {
    if (path === undefined) return false;
    const real = realOrResolved(path);
    return real === project || isWithin(real, project);
  });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function realOrResolved(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

/** `path` lies strictly inside `base` (whole components). */
function isWithin(path: string, base: string): boolean {
  const prefix = base.endsWith(sep) ? base : base + sep;
  return path.startsWith(prefix);
}

// Reasons already reported in this process: `auto` says once that it cannot confine.
const reported = new Set<string>();

/**
 * Reports, once per process and reason, that servers run unconfined. Returns true when this
 * call reported it.
 */
export function reportUnconfinedOnce(
  confinement: Confinement,
  report: (message: string) => void,
): boolean {
  if (confinement.kind !== 'none' || confinement.reason === undefined) return false;
  if (reported.has(confinement.reason)) return false;
  reported.add(confinement.reason);
  report(
    `Stdio servers run WITHOUT OS confinement: ${confinement.reason}. Only path rewriting and ` +
      'the sandbox repository protect your files; set sandbox.confine: required to refuse instead.',
  );
  return true;
}
