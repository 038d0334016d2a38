import { spawnSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type {
  ConfinementBackend,
  ConfinementCheck,
  ConfinementProbe,
  ConfinementWrapInput,
} from './confinement.js';
import { npmCacheEnvironment } from './npm-cache.js';
import { filesLinkedInto } from './confinement-sockets.js';
import {
  launchWithSeccomp,
  PRIVILEGE_ARGUMENTS,
  SECCOMP_ARGUMENTS,
} from './confinement-privilege.js';

/**
 * The bubblewrap confinement backend (Linux): user, mount and pid namespaces, the file system
 * read-only, the sandbox writable, the scope's hidden folders empty (see
 * {@link bubblewrapArguments}).
 */
export const bubblewrapBackend: ConfinementBackend = {
  name: 'bubblewrap',
  platforms: ['linux'],
  confines: true,
  installHint: 'apt-get install bubblewrap',
  probe: (settings) =>
    probeBubblewrap({
      network: settings.network,
      ...(settings.bwrapPath === undefined ? {} : { bwrapPath: settings.bwrapPath }),
    }),
  wrap: (path, input) => launchWithSeccomp(path, bubblewrapArguments(input)),
  hides: (scope) => [...(scope.hidden ?? [])],
  doctorChecks: (settings) => [checkBubblewrap(settings.bwrapPath)],
};

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

/** The fix named in messages when bubblewrap is missing. */
export const BUBBLEWRAP_INSTALL_HINT = 'apt-get install bubblewrap';

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
  if (platforms !== 'all' && !platforms.includes(process.platform)) {
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
    ...baseArguments(network),
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

/** Namespaces, privileges and the seccomp filter (see `confinement-privilege.ts`). */
function baseArguments(network: boolean): string[] {
  return [
    '--die-with-parent',
    ...PRIVILEGE_ARGUMENTS,
    ...(network ? [] : ['--unshare-net']),
    ...SECCOMP_ARGUMENTS,
  ];
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

/** One mount of the plan: a tmpfs over `dest`, or `src` bound at `dest` read-only or writable. */
interface Mount {
  kind: 'tmpfs' | 'ro' | 'rw';
  dest: string;
  src?: string;
}

/** What {@link bubblewrapArguments} builds a command line from. */
export type BubblewrapInput = ConfinementWrapInput;

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
  // Host sockets: private and writable like /tmp (programs keep locks in /run), never remounted
  // read-only; a folder the sandbox or the project lies in is covered by their binds anyway.
  const socketFolders = existingReal(scope.sockets ?? []).filter(
    (path) => path !== sep && path !== sandbox && !TMPFS_ROOTS.includes(path),
  );
  for (const path of socketFolders) mounts.push({ kind: 'tmpfs', dest: path });
  const privateTmpfs = new Set([...TMPFS_ROOTS, ...socketFolders]);
  for (const path of existingReal(scope.hidden ?? [])) {
    if (path === sep || privateTmpfs.has(path)) continue;
    // The sandbox itself is never hidden; folders the project bind covers need no tmpfs (and a
    // tmpfs there would create a mount point inside the sandbox).
    if (path === sandbox) continue;
    if (bindProject && (path === project || isWithin(path, project!))) continue;
    // A hidden file (a linked worktree's `.git`, a gitfile) cannot take a tmpfs: an empty file
    // is bound over it read-only instead, so it can be neither read nor rewritten nor removed.
    if (isRegularFile(path)) mounts.push({ kind: 'ro', src: '/dev/null', dest: path });
    else mounts.push({ kind: 'tmpfs', dest: path });
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
  refuseStateFolderPaths(scope, sandbox, command, args);
  const restores = [
    ...serverFolders(command, args, scope.sandboxRoot),
    ...(input.launch === undefined
      ? []
      : serverFolders(input.launch.command, input.launch.args, scope.sandboxRoot)),
    ...(cwd === sandbox ? [] : [cwd]),
    ...existingReal(scope.readable ?? []),
    ...filesLinkedInto(socketFolders),
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
      .filter((mount) => mount.kind === 'tmpfs' && !privateTmpfs.has(mount.dest))
      .flatMap((mount) => ['--remount-ro', mount.dest]),
    // The network hook's launch: its binds (the proxy socket's folder) and variables.
    ...(input.launch?.binds ?? []).flatMap((bind) => ['--bind', bind.src, bind.dest]),
    ...Object.entries(input.launch?.env ?? {}).flatMap(([key, value]) => ['--setenv', key, value]),
    ...(input.npmCache === undefined ? [] : npmCacheEnvironment(input.npmCache)),
    '--chdir',
    input.cwd ?? scope.sandboxRoot,
    '--',
    ...(input.launch === undefined
      ? [command, ...args]
      : [input.launch.command, ...input.launch.args]),
  ];
}

/**
 * A server's executable or absolute argument inside the state folder (OAuth tokens, other
 * sandboxes' stores) would be put back readable as the server's "own files": refused, unless it
 * lies in this server's own sandbox.
 *
 * @throws AgentsError `CONFIG_INVALID` naming the path and the fix.
 */
function refuseStateFolderPaths(
  scope: BubblewrapInput['scope'],
  sandbox: string,
  command: string,
  args: readonly string[],
): void {
  if (scope.stateDir === undefined) return;
  const state = realOrResolved(scope.stateDir);
  for (const path of [command, ...args].filter((arg) => isAbsolute(arg))) {
    const real = realOrResolved(path);
    if (real === sandbox || isWithin(real, sandbox)) continue;
    if (real !== state && !isWithin(real, state)) continue;
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `The server's command line names ${path}, inside the agents state folder ${state} (OAuth tokens, sandboxes), which confined servers never see. Install the server elsewhere and point its command or arguments there.`,
      { details: { path, stateDir: state } },
    );
  }
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
 * `Cargo.toml` above it, below the home folder or a tmp root); else, under a private tmp root
 * and outside the home folder, the whole top folder (a checkout in /tmp/x resolves imports from
 * /tmp/x/node_modules); for a
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
    folders.push(...installFolders(isDirectory(real) ? real : dirname(real), program));
  };
  for (const program of programs) add(program, true);
  for (const arg of args) if (isAbsolute(arg)) add(arg, false);
  return folders.map(realOrResolved);
}

const PACKAGE_MARKERS = ['package.json', 'pyproject.toml', 'Cargo.toml'];

// What a prefix (`X` of `X/bin/program`) holds that its programs load: never the rest of `X`
// (`~/.cargo/credentials.toml`, `~/.local/share`, ...).
const PREFIX_PARTS = ['bin', 'lib', 'lib64', 'pyvenv.cfg'];

function installFolders(folder: string, program: boolean): string[] {
  const parts = folder.split(sep);
  const modules = parts.indexOf('node_modules');
  if (modules > 1) return [parts.slice(0, modules).join(sep)];
  const tmp = TMPFS_ROOTS.find((root) => isWithin(folder, root));
  const home = homedir();
  for (let at = folder; at !== dirname(at) && at !== home && at !== tmp; at = dirname(at)) {
    if (PACKAGE_MARKERS.some((marker) => existsSync(join(at, marker)))) return [at];
  }
  // Not inside the home folder: its tmpfs lies deeper than a tmp root's top folder and would
  // cover that restore (a home under /tmp), and a top folder at or in the home would put the
  // whole home back.
  if (tmp !== undefined && folder !== home && !isWithin(folder, home))
    return [join(tmp, folder.slice(tmp.length + 1).split(sep)[0]!)];
  if (program && basename(folder) === 'bin' && dirname(folder) !== sep) {
    const prefix = dirname(folder);
    return PREFIX_PARTS.map((part) => join(prefix, part)).filter((path) => existsSync(path));
  }
  return [folder];
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

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
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
