import { mkdirSync } from 'node:fs';
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

/** bubblewrap `--setenv` arguments pointing npm at `dir`, quiet and cache-first. */
export function npmCacheEnvironment(dir: string): string[] {
  return [
    '--setenv',
    'npm_config_cache',
    dir,
    '--setenv',
    'npm_config_prefer_offline',
    'true',
    '--setenv',
    'npm_config_update_notifier',
    'false',
  ];
}
