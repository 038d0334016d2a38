import { isProcessAlive } from '../core/process-alive.js';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

/** Launchers that install a package before running it and so need a writable npm cache. */
const NPM_LAUNCHERS = new Set(['npx', 'npm']);

/**
 * The writable npm cache a confined `npx`/`npm` server gets: its own folder under
 * `$XDG_CACHE_HOME/agents/npm/` (else `~/.cache/agents/npm/`), one per server.
 *
 * Why: `npx -y PKG` writes to its cache even when PKG is cached (it revalidates the package's
 * metadata), and the user's own `~/.npm` is read-only inside the confinement: a confined server
 * must never write where the user's unconfined `npx` later reads packages (a poisoned cache is
 * code the host runs). A private cache per server keeps the poison, if any, to that server, which
 * runs confined. The first start downloads the package (it needs the network); later starts
 * prefer what is cached. Undefined for other commands.
 */
export function privateNpmCache(
  command: string,
  serverName: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!NPM_LAUNCHERS.has(basename(command))) return undefined;
  const home = env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir();
  const base = env['XDG_CACHE_HOME'] || join(home, '.cache');
  const key = (serverName ?? 'server').replace(/[^A-Za-z0-9._-]/g, '_') || 'server';
  const dir = join(base, 'agents', 'npm', key);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The variables pointing npm at `dir`, quiet and cache-first. */
export function npmCacheEnvironment(dir: string): Record<string, string> {
  return {
    npm_config_cache: dir,
    npm_config_prefer_offline: 'true',
    npm_config_update_notifier: 'false',
  };
}

/**
 * Written into a private cache before a server starts, removed once it answered `initialize`:
 * found at the next start, it says the last start was cut short (the host killed, a start
 * timeout) and may have left a half-extracted `npx` install. Holds the host's pid.
 */
export const NPM_START_MARKER = '.agents-start-pending';

/** Starts in flight in this process, per cache folder. */
const startsInFlight = new Map<string, number>();

/**
 * The pid recorded in a start marker, or undefined when there is none (or it is unreadable).
 * The cache is writable by the server inside its confinement, so the marker is read the way
 * anything a server can write is read (issue 35, item 4): never through a symlink (`O_NOFOLLOW`),
 * never blocking (`O_NONBLOCK`: a fifo planted there hung the CLI), a regular file only, and
 * only its first bytes.
 */
function markerPid(dir: string): number | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(
      join(dir, NPM_START_MARKER),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    if (!fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(32);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const pid = Number.parseInt(buffer.subarray(0, read).toString('utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether the marker entry is there, whatever it is (a planted symlink is not followed). */
function markerThere(dir: string): boolean {
  try {
    lstatSync(join(dir, NPM_START_MARKER));
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes the marker as a new regular file: whatever stands under its name (a symlink a server
 * planted to make the host truncate another project's file, a fifo, a folder) is removed first
 * (the link itself, never its target), and the file is created exclusively (`wx`: `O_EXCL`
 * never follows a symlink), so a link planted in between fails the write instead of being
 * followed. A marker that cannot be written only costs the clean-up of a later cut-short start.
 */
function writeMarker(dir: string): void {
  const path = join(dir, NPM_START_MARKER);
  for (let attempt = 0; attempt < 3; attempt++) {
    rmSync(path, { recursive: true, force: true });
    try {
      writeFileSync(path, `${process.pid}\n`, { mode: 0o600, flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return;
    }
  }
}

/**
 * Called before a server starts with a private npm cache. npm extracts an `npx` package into
 * `_npx/<hash>/node_modules` bit by bit and only then records it; a start killed in between
 * leaves a half install that npx later takes as installed, so every later start fails
 * (`ERR_MODULE_NOT_FOUND`) until the folder is removed. When the previous start never finished
 * (its marker is still here, and no live start holds it: not one in flight in this process, not
 * another live process), `_npx` is removed with a one-line `notice` (npm installs it again,
 * from its content cache when it can). Then the marker is written.
 *
 * Returns `settle(started)`: `true` once the server answered (the marker goes when no other start
 * of this cache is in flight), `false` for a failed or abandoned start (the marker stays, so the
 * next start cleans up). Only the first call counts.
 */
export function beginNpmCacheStart(
  dir: string,
  serverName: string | undefined,
  notice: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
): (started: boolean) => void {
  const inFlight = startsInFlight.get(dir) ?? 0;
  const pid = markerPid(dir);
  const heldElsewhere = pid !== undefined && pid !== process.pid && isProcessAlive(pid);
  const pending = markerThere(dir);
  if (pending && inFlight === 0 && !heldElsewhere && existsSync(join(dir, '_npx'))) {
    rmSync(join(dir, '_npx'), { recursive: true, force: true });
    notice(
      `[agents] server "${serverName ?? 'server'}": removed a partial npm install left by a start ` +
        `that was cut short (${join(dir, '_npx')}); npx installs it again.`,
    );
  }
  writeMarker(dir);
  startsInFlight.set(dir, inFlight + 1);
  let settled = false;
  return (started) => {
    if (settled) return;
    settled = true;
    const left = (startsInFlight.get(dir) ?? 1) - 1;
    if (left > 0) startsInFlight.set(dir, left);
    else startsInFlight.delete(dir);
    if (started && left === 0)
      rmSync(join(dir, NPM_START_MARKER), { recursive: true, force: true });
  };
}
