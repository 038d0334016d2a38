import { spawnSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { NetworkLaunch, ServerNetworkHook } from './network/server-network.js';
import { npmCacheEnvironment, privateNpmCache } from './npm-cache.js';

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
  /**
   * Folders hidden from servers (an empty tmpfs over each): the workspace, the state folder,
   * the home folder. A hidden folder may contain the sandbox, the project or a server's own
   * files: those are mounted back over it (the most specific mount wins).
   */
  hidden?: readonly string[];
  /** Folders kept readable (read-only) even inside a hidden one (e.g. the npm cache). */
  readable?: readonly string[];
  /** Folders a server's `writable` exception may not overlap (the state folder, the workspace). */
  guarded?: readonly string[];
}

/** A server's explicit exceptions (its YAML `sandbox:`): absolute paths. */
export interface ConfinementExceptions {
  writable?: readonly string[];
  readOnly?: readonly string[];
}

/** The server a command line belongs to: its name (network rules) and its exceptions. */
export interface WrapServer {
  name?: string | undefined;
  exceptions?: ConfinementExceptions | undefined;
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
   * The command line that runs `command args` confined (or unchanged for `none`), in `cwd`,
   * with the server's own exceptions and network rules.
   *
   * @throws AgentsError `CONFINEMENT_UNAVAILABLE` when the server has network host lists and
   *   cannot be confined or its proxy is not running.
   */
  wrap(
    command: string,
    args: readonly string[],
    cwd: string | undefined,
    server?: WrapServer,
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
          wrap: (command, args, _cwd, server) => {
            hook.launch(
              server?.name,
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
  const bwrap = probe.path;
  return {
    kind: 'bubblewrap',
    network,
    ...(hook === undefined ? {} : { networkHook: hook }),
    wrap: (command, args, cwd, server) => {
      // The network hook decides per server: cut, open, or only through the proxy.
      const net = hook?.launch(server?.name, true, command, args);
      return {
        command: bwrap,
        args: bubblewrapArguments({
          scope,
          network: net === undefined ? network : !net.unshareNet,
          command,
          args,
          cwd,
          exceptions: server?.exceptions,
          ...(net === undefined ? {} : { launch: net }),
          npmCache: privateNpmCache(command, server?.name),
        }),
      };
    },
  };
}

/** One mount of the plan: a tmpfs over `dest`, or `src` bound at `dest` read-only or writable. */
interface Mount {
  kind: 'tmpfs' | 'ro' | 'rw';
  dest: string;
  src?: string;
}

/** What {@link bubblewrapArguments} builds a command line from. */
export interface BubblewrapInput {
  scope: ConfinementScope;
  network: boolean;
  command: string;
  args: readonly string[];
  /** The server's working folder (default: the sandbox). */
  cwd: string | undefined;
  exceptions?: ConfinementExceptions | undefined;
  /**
   * The network hook's launch: extra arguments after the mounts (the proxy socket, its
   * variables) and the command line that really runs (the forwarder in front of the server).
   */
  launch?: NetworkLaunch;
  /** A private writable npm cache for an `npx`/`npm` server (see `privateNpmCache`). */
  npmCache?: string | undefined;
}

/**
 * The whole bubblewrap command line (without the bwrap executable) for one server: namespaces,
 * then mounts, then `--chdir` and the server's own command. The one place that decides what a
 * confined server sees (a later network policy adds its namespace and proxy here).
 *
 * Mounts, the most specific path winning (bubblewrap applies them in order and a later mount
 * covers an earlier one, so they are sorted by depth):
 * - the whole file system read-only, fresh /dev and /proc, a private /tmp and /var/tmp;
 * - each hidden folder (workspace, state folder, home) an empty tmpfs;
 * - the sandbox writable at its own path, and at the project's path when the server's own files
 *   are not in the project (else the project stays read-only, its workspace hidden);
 * - read-only again, where a hidden folder or the private /tmp covers them: the server's install
 *   folders (its executable, interpreter, absolute arguments), its configured working folder,
 *   the scope's readable folders (npm cache) and the server's `readOnly` exceptions;
 * - writable: the server's `writable` exceptions.
 */
export function bubblewrapArguments(input: BubblewrapInput): string[] {
  const { scope, command, args } = input;
  const sandbox = realOrResolved(scope.sandboxRoot);
  const cwd = input.cwd === undefined ? sandbox : realOrResolved(input.cwd);
  const project = scope.projectDir === undefined ? undefined : realOrResolved(scope.projectDir);
  const canBindProject =
    project !== undefined &&
    project !== sandbox &&
    !isWithin(project, sandbox) &&
    !isWithin(sandbox, project) &&
    existsSync(project);
  const bindProject =
    canBindProject && !serverFilesUnder(project!, command, args, scope.sandboxRoot);

  const mounts: Mount[] = [];
  for (const root of TMPFS_ROOTS) if (existsSync(root)) mounts.push({ kind: 'tmpfs', dest: root });
  for (const path of existingReal(scope.hidden ?? [])) {
    if (path === sep || TMPFS_ROOTS.includes(path)) continue;
    // The sandbox itself is never hidden; folders the project bind covers need no tmpfs (and a
    // tmpfs there would create a mount point inside the sandbox).
    if (path === sandbox) continue;
    if (bindProject && (path === project || isWithin(path, project!))) continue;
    mounts.push({ kind: 'tmpfs', dest: path });
  }
  if (bindProject) {
    mounts.push({ kind: 'rw', src: sandbox, dest: project! });
    // The sandbox's own repository may borrow the user's objects (alternates naming
    // `<project>/.git/objects`): keep the user's git dir readable at its path, read-only, over
    // the sandbox's `.git` there. Only where both exist: a missing mount point would be created
    // in the sandbox.
    const userGit = join(project!, '.git');
    if (isDirectory(userGit) && isDirectory(join(sandbox, '.git')))
      mounts.push({ kind: 'ro', dest: userGit });
  } else if (project !== undefined && project !== sandbox && existsSync(project)) {
    mounts.push({ kind: 'ro', dest: project });
  }
  mounts.push({ kind: 'rw', dest: sandbox });
  // What the server names for itself (its working folder, its read-only exceptions) never puts
  // back a guarded folder (the state folder, the workspace) or anything inside one.
  const guarded = existingReal(scope.guarded ?? []);
  for (const path of [
    ...(cwd === sandbox ? [] : [cwd]),
    ...existingReal(expandAll(input.exceptions?.readOnly)),
  ]) {
    const clash = guarded.find((folder) => path === folder || isWithin(path, folder));
    if (clash !== undefined) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `The server's working folder or sandbox.readOnly exception ${path} lies in ${clash} (the workspace or the state folder), which confined servers never see. Point it at a folder of the server's own.`,
        { details: { path, overlaps: clash } },
      );
    }
  }
  const restores = [
    ...serverFolders(command, args, scope.sandboxRoot),
    ...(input.launch === undefined
      ? []
      : serverFolders(input.launch.command, input.launch.args, scope.sandboxRoot)),
    ...(cwd === sandbox ? [] : [cwd]),
    ...existingReal(scope.readable ?? []),
    ...existingReal(expandAll(input.exceptions?.readOnly)),
  ];
  // Put back only what the plan so far hides (a tmpfs is its most specific mount): a folder
  // the sandbox covers stays the sandbox's.
  const planned = [...mounts];
  for (const folder of new Set(restores)) {
    if (coveringMount(planned, folder)?.kind === 'tmpfs') mounts.push({ kind: 'ro', dest: folder });
  }
  for (const path of existingReal(expandAll(input.exceptions?.writable))) {
    // An exception is for a server's own data, never a way back into the user's project, the
    // sandbox's surroundings or the state folder.
    const clash = [project, sandbox, ...existingReal(scope.guarded ?? [])].find(
      (guarded) =>
        guarded !== undefined &&
        (path === guarded || isWithin(path, guarded) || isWithin(guarded, path)),
    );
    if (clash !== undefined) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `The server's sandbox.writable exception ${path} overlaps ${clash} (the project, the sandbox, the workspace or the state folder); an exception may name only a server's own data folder elsewhere. Remove it from the server's YAML.`,
        { details: { path, overlaps: clash } },
      );
    }
    mounts.push({ kind: 'rw', dest: path });
  }
  if (input.npmCache !== undefined) mounts.push({ kind: 'rw', dest: input.npmCache });
  const ordered = mounts
    .map((mount, index) => ({ mount, index }))
    .sort(
      (a, b) =>
        depth(a.mount.dest) - depth(b.mount.dest) ||
        KIND_ORDER[a.mount.kind] - KIND_ORDER[b.mount.kind] ||
        a.index - b.index,
    )
    .map(({ mount }) => mount);
  return [
    ...baseArguments(input.network),
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    ...ordered.flatMap((mount) =>
      mount.kind === 'tmpfs'
        ? ['--tmpfs', mount.dest]
        : [mount.kind === 'ro' ? '--ro-bind' : '--bind', mount.src ?? mount.dest, mount.dest],
    ),
    // Hidden folders are read-only too (once everything inside them is mounted): a write there
    // fails with EROFS, like any write outside the sandbox, instead of vanishing with a tmpfs.
    ...ordered
      .filter((mount) => mount.kind === 'tmpfs' && !TMPFS_ROOTS.includes(mount.dest))
      .flatMap((mount) => ['--remount-ro', mount.dest]),
    ...(input.launch?.bwrapArgs ?? []),
    ...(input.npmCache === undefined ? [] : npmCacheEnvironment(input.npmCache)),
    '--chdir',
    input.cwd ?? scope.sandboxRoot,
    '--',
    ...(input.launch === undefined
      ? [command, ...args]
      : [input.launch.command, ...input.launch.args]),
  ];
}

// At one path a tmpfs goes first and a bind over it wins.
const KIND_ORDER: Record<Mount['kind'], number> = { tmpfs: 0, ro: 1, rw: 2 };

function depth(path: string): number {
  return path.split(sep).filter((part) => part !== '').length;
}

/** The most specific mount at or above `path` (undefined: only the read-only root). */
function coveringMount(mounts: readonly Mount[], path: string): Mount | undefined {
  let best: Mount | undefined;
  for (const mount of mounts) {
    if (mount.dest !== path && !isWithin(path, mount.dest)) continue;
    if (best === undefined || depth(mount.dest) >= depth(best.dest)) best = mount;
  }
  return best;
}

/** Existing paths, resolved to real paths, without repeats. */
function existingReal(paths: readonly string[]): string[] {
  return [...new Set(paths.filter((path) => existsSync(path)).map(realOrResolved))];
}

/** `~/x` is the home folder's `x`; other paths as given (absolute in a valid config). */
function expandAll(paths: readonly string[] | undefined): string[] {
  return (paths ?? []).map((path) =>
    path === '~' ? homedir() : path.startsWith('~/') ? join(homedir(), path.slice(2)) : path,
  );
}

const TMPFS_ROOTS = ['/tmp', '/var/tmp'];

/**
 * The install folders of a server: where its executable, the interpreter its script names and
 * the absolute paths among its arguments live. A link is kept where it is named (its folder) and
 * where it really lives. A real file's folder widens to: inside `node_modules`, the folder holding
 * the outermost one; else the nearest package root (a `package.json`, `pyproject.toml` or
 * `Cargo.toml` above it, below the home folder or a tmp root); else, under a private tmp root,
 * the whole top folder (a checkout in /tmp/x resolves imports from /tmp/x/node_modules); for a
 * program in `X/bin/`, `X` (an npm or Python prefix: `bin/` holds links into `lib/`).
 */
function serverFolders(command: string, args: readonly string[], cwd: string): string[] {
  const executable = command.includes('/') ? resolve(cwd, command) : findExecutable(command);
  const programs = [executable, interpreterOf(executable), process.execPath];
  const folders: string[] = [];
  const add = (path: string | undefined, program: boolean) => {
    if (path === undefined || !existsSync(path)) return;
    const named = resolve(path);
    folders.push(isDirectory(named) ? named : dirname(named));
    const real = realOrResolved(path);
    folders.push(installFolder(isDirectory(real) ? real : dirname(real), program));
  };
  for (const program of programs) add(program, true);
  for (const arg of args) if (isAbsolute(arg)) add(arg, false);
  return folders.map(realOrResolved);
}

const PACKAGE_MARKERS = ['package.json', 'pyproject.toml', 'Cargo.toml'];

function installFolder(folder: string, program: boolean): string {
  const parts = folder.split(sep);
  const modules = parts.indexOf('node_modules');
  if (modules > 1) return parts.slice(0, modules).join(sep);
  const tmp = TMPFS_ROOTS.find((root) => isWithin(folder, root));
  const home = homedir();
  for (let at = folder; at !== dirname(at) && at !== home && at !== tmp; at = dirname(at)) {
    if (PACKAGE_MARKERS.some((marker) => existsSync(join(at, marker)))) return at;
  }
  if (tmp !== undefined) return join(tmp, folder.slice(tmp.length + 1).split(sep)[0]!);
  if (program && basename(folder) === 'bin' && dirname(folder) !== sep) return dirname(folder);
  return folder;
}

/** The interpreter a script's `#!` line names (`/usr/bin/env X` looks X up on PATH). */
function interpreterOf(executable: string | undefined): string | undefined {
  if (executable === undefined) return undefined;
  let head: string;
  try {
    const fd = openSync(executable, 'r');
    try {
      const buffer = Buffer.alloc(256);
      head = buffer.subarray(0, readSync(fd, buffer, 0, 256, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith('#!')) return undefined;
  const [interpreter, ...rest] = head.slice(2).split('\n')[0]!.trim().split(/\s+/);
  if (interpreter === undefined || interpreter === '') return undefined;
  if (basename(interpreter) === 'env') {
    const name = rest.find((part) => !part.startsWith('-'));
    return name === undefined ? undefined : findExecutable(name);
  }
  return interpreter;
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

/** How {@link confinementRefusalNote} starts (the CLI prints the note on a line of its own). */
export const CONFINEMENT_REFUSAL_PREFIX = '[agents] OS confinement refused';

const READ_ONLY_FS = /\bEROFS\b|read-only file system/i;

/**
 * When a confined server's error text says a write hit a read-only file system (EROFS), the note
 * that names the cause and the way out: confinement refused a write outside the sandbox; a
 * server that keeps its own data elsewhere gets an explicit `sandbox.writable` exception. The
 * path in the error (`open '/x/y'`) is named when there is one. Undefined for other errors.
 */
export function confinementRefusalNote(serverName: string, text: string): string | undefined {
  if (!READ_ONLY_FS.test(text)) return undefined;
  const path = /['"`](\/[^'"`\n]+)['"`]/.exec(text)?.[1];
  const folder = path === undefined ? '/path/to/its/data' : dirname(path);
  return (
    `${CONFINEMENT_REFUSAL_PREFIX} a write outside the sandbox${path === undefined ? '' : ` (${path})`}: ` +
    `server "${serverName}" may write only in the sandbox and a private /tmp. If it must keep its ` +
    `own data there, allow that folder in .agents/servers/${serverName}.yaml with ` +
    `\`sandbox: { writable: [${folder}] }\` (\`agents doctor\` lists these exceptions); ` +
    'otherwise write inside the project.'
  );
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
