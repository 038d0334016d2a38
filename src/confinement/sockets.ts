import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, sep } from 'node:path';

/**
 * Where the host keeps pathname Unix sockets a confined server must not reach: a network
 * namespace does not cover them and a read-only mount does not stop `connect()`. The system and
 * session buses, `docker.sock` and containerd (root on the host), podman, systemd's sockets and
 * an ssh-agent all live under `/run` (`/var/run` links there), `$XDG_RUNTIME_DIR` or a folder
 * a variable names; LXD keeps its own under `/var/lib/lxd` or the snap's folder. Each becomes a
 * private empty tmpfs in the namespace (writable, like `/tmp`), unless a server's `sandbox:` rule
 * names a path inside it. `/tmp` (X11, ssh-agent) is private already.
 */
export function hostSocketFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const folders = ['/run', '/var/run', '/var/lib/lxd', '/var/snap/lxd/common/lxd'];
  const runtime = env['XDG_RUNTIME_DIR'];
  if (runtime !== undefined && isAbsolute(runtime)) folders.push(runtime);
  // A socket a variable names, wherever it lives: its folder (never `/` or a top folder).
  const named = [
    env['SSH_AUTH_SOCK'],
    unixPath(env['DOCKER_HOST'], 'unix://'),
    unixPath(env['DBUS_SESSION_BUS_ADDRESS'], 'unix:path='),
    unixPath(env['DBUS_SYSTEM_BUS_ADDRESS'], 'unix:path='),
  ];
  for (const socket of named) {
    if (socket === undefined || !isAbsolute(socket)) continue;
    const folder = dirname(socket);
    if (depth(folder) >= 2) folders.push(folder);
  }
  // The host's temp folder when it is not /tmp (private already): every server's proxy socket
  // folder and other programs' sockets live there; each server gets only its own proxy folder,
  // bound at /tmp/.agents-network.
  const temp = env['TMPDIR'];
  if (temp !== undefined && isAbsolute(temp) && depth(temp) >= 1) folders.push(temp);
  return [...new Set(folders)];
}

function depth(path: string): number {
  return path.split(sep).filter((part) => part !== '').length;
}

/** The path of a `unix:` address (`unix:///run/docker.sock`, `unix:path=/run/bus,guid=…`). */
function unixPath(address: string | undefined, prefix: string): string | undefined {
  if (address === undefined || !address.startsWith(prefix)) return undefined;
  return address.slice(prefix.length).split(/[,;]/)[0];
}

/**
 * Files of `/etc` that link into a socket folder (`/etc/resolv.conf` to systemd-resolved's
 * `/run/systemd/resolve/stub-resolv.conf`): their real files stay readable, or name lookups
 * inside would break once the folder is hidden. Only regular files, never a socket.
 */
export function filesLinkedInto(folders: readonly string[]): string[] {
  const real = folders.flatMap((folder) => {
    try {
      return [realpathSync.native(folder)];
    } catch {
      return [];
    }
  });
  const files: string[] = [];
  let names: string[];
  try {
    names = readdirSync('/etc');
  } catch {
    return files;
  }
  for (const name of names) {
    const path = join('/etc', name);
    try {
      if (!lstatSync(path).isSymbolicLink()) continue;
      const target = realpathSync.native(path);
      if (!statSync(target).isFile()) continue;
      if (real.some((folder) => target.startsWith(folder + sep))) files.push(target);
    } catch {
      // a dangling link: nothing to keep
    }
  }
  return files;
}
