import { existsSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { LaunchRequest } from './backend.js';
import { filesLinkedInto } from './sockets.js';
import {
  existingReal,
  expandAll,
  isDirectory,
  isRegularFile,
  isWithin,
  realOrResolved,
  refuseUnsafeServerPaths,
  serverFilesUnder,
  serverFolders,
  TMPFS_ROOTS,
} from './server-files.js';

/** One mount of the plan: a tmpfs over `dest`, or `src` bound at `dest` read-only or writable. */
interface Mount {
  kind: 'tmpfs' | 'ro' | 'rw';
  dest: string;
  src?: string;
}

/**
 * The mounts of a bubblewrap command line for one server (after the namespace arguments, before
 * `--chdir`): the one place that decides what a bubblewrap-confined server sees.
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
 * - writable: the server's `writable` exceptions and the request's writable folders;
 * - the proxy socket's folder (`network: proxy`) at the place the forwarder expects it.
 *
 * @throws AgentsError `CONFIG_INVALID` for a server path a confinement must refuse (see
 *   `refuseUnsafeServerPaths`).
 */
export function bubblewrapMounts(request: LaunchRequest): string[] {
  const { scope, command, args } = request;
  refuseUnsafeServerPaths(request, command, args);
  const sandbox = realOrResolved(scope.sandboxRoot);
  const cwd = request.cwd === undefined ? sandbox : realOrResolved(request.cwd);
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
  const restores = [
    ...serverFolders(command, args, scope.sandboxRoot),
    ...(request.entry === undefined
      ? []
      : serverFolders(request.entry.command, request.entry.args, scope.sandboxRoot)),
    ...(cwd === sandbox ? [] : [cwd]),
    ...existingReal(scope.readable ?? []),
    ...filesLinkedInto(socketFolders),
    ...existingReal(expandAll(request.exceptions?.readOnly)),
  ];
  // Put back only what the plan so far hides (a tmpfs is its most specific mount): a folder
  // the sandbox covers stays the sandbox's.
  const planned = [...mounts];
  for (const folder of new Set(restores)) {
    if (coveringMount(planned, folder)?.kind === 'tmpfs') mounts.push({ kind: 'ro', dest: folder });
  }
  for (const path of existingReal(expandAll(request.exceptions?.writable)))
    mounts.push({ kind: 'rw', dest: path });
  for (const path of request.writable ?? []) mounts.push({ kind: 'rw', dest: path });
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
    ...(request.proxy === undefined ? [] : ['--bind', request.proxy.folder, request.proxy.at]),
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
