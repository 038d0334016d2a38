/**
 * `agents doctor`'s environment checks: what a run needs from the machine (Node, git, OS
 * confinement through each backend's own checks, SQLite, the state folder), each with what to
 * do when it is missing. Cheap (a few short spawns); nothing is changed.
 */
import { gitVersionSync } from '../../sandbox/git.js';
import { accessSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { allConfinementBackends, runsOn } from '../../confinement/backends.js';
import type { ConfinementBackendSettings } from '../../confinement/backends.js';
import { agentsStateDir, STATE_DIR_ENV } from '../../sandbox/state-dir.js';

/** `ok`; `warn`: works, with less (no confinement, no SQLite); `fail`: runs will not work. */
export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One environment check. */
export interface EnvironmentCheck {
  name: string;
  status: CheckStatus;
  /** What was found. */
  detail: string;
  /** What to do about it (absent when `ok`). */
  fix?: string;
}

/** Inputs of {@link checkEnvironment}, all defaulting to this process's. */
export interface EnvironmentCheckOptions {
  env?: NodeJS.ProcessEnv;
  /** `process.versions.node`. */
  nodeVersion?: string;
  /** The git executable (default `git` on PATH). */
  gitPath?: string;
  /** A confinement backend's settings to check with (default: each backend's defaults). */
  confinement?: ConfinementBackendSettings;
}

/** The Node the package's `engines` asks for. */
const NODE_MINIMUM = [20, 19] as const;
/** Older git is untested (the suite runs on 2.39); 2.25 is a conservative floor. */
const GIT_MINIMUM = [2, 25] as const;

function atLeast(version: readonly number[], minimum: readonly number[]): boolean {
  for (let index = 0; index < minimum.length; index++) {
    const have = version[index] ?? 0;
    if (have !== minimum[index]) return have > minimum[index]!;
  }
  return true;
}

function parseVersion(text: string): number[] | undefined {
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return match ? match.slice(1).map((part) => Number(part ?? 0)) : undefined;
}

function checkNode(version: string): EnvironmentCheck {
  const parsed = parseVersion(version) ?? [0];
  return atLeast(parsed, NODE_MINIMUM)
    ? { name: 'node', status: 'ok', detail: `Node ${version}` }
    : {
        name: 'node',
        status: 'fail',
        detail: `Node ${version} is older than ${NODE_MINIMUM.join('.')}`,
        fix: `install Node ${NODE_MINIMUM.join('.')} or newer (e.g. \`nvm install 20\`)`,
      };
}

function checkGit(path: string): EnvironmentCheck {
  const result = gitVersionSync(path);
  if (result.stdout === undefined) {
    return {
      name: 'git',
      status: 'fail',
      detail: `git (${path}) could not run${result.error ? `: ${result.error}` : ''}`,
      fix: 'install git (`apt-get install git`); sandboxes, snapshots and rollback use it',
    };
  }
  const text = result.stdout.trim();
  const version = parseVersion(text) ?? [0];
  return atLeast(version, GIT_MINIMUM)
    ? { name: 'git', status: 'ok', detail: text }
    : {
        name: 'git',
        status: 'warn',
        detail: `${text} is older than ${GIT_MINIMUM.join('.')} (untested)`,
        fix: 'upgrade git if sandbox or rollback commands fail',
      };
}

/**
 * The confinement backends' own checks, for those that run on this platform; a line per
 * confining backend when none does (servers run unconfined here, nothing to install).
 */
function checkConfinement(settings: ConfinementBackendSettings | undefined): EnvironmentCheck[] {
  const backends = allConfinementBackends();
  const here = backends.filter((backend) => runsOn(backend, process.platform));
  if (here.length > 0)
    return here.flatMap((backend) => {
      const own = settings?.type === backend.type ? settings : { type: backend.type };
      return backend.doctorChecks?.(own) ?? [];
    });
  return backends.map((backend) => {
    const platforms = backend.platforms.join(', ');
    return {
      name: backend.type,
      status: 'warn',
      detail: `${backend.type} runs on ${platforms} only; stdio servers run unconfined (confine: required refuses to start them)`,
      fix: `nothing to install here: ${backend.type} confinement needs ${platforms}`,
    };
  });
}

/** The packages the SQLite checkpointer (the CLI's default) needs, and the line that adds both. */
const SQLITE_PACKAGES = ['@langchain/langgraph-checkpoint-sqlite', 'better-sqlite3'] as const;
const SQLITE_INSTALL = `npm install ${SQLITE_PACKAGES.join(' ')}`;

/**
 * Both packages of the SQLite checkpointer, named as `actor run` names them: the saver must
 * resolve and better-sqlite3 must load (a native module built for another Node does not).
 * `require` is where they are looked up (this package's own, by default).
 */
export function checkSqlite(
  require: NodeJS.Require = createRequire(import.meta.url),
): EnvironmentCheck {
  const missing = SQLITE_PACKAGES.filter((name) => {
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    return {
      name: 'sqlite',
      status: 'warn',
      detail: `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not installed: the sqlite checkpointer (the CLI default) cannot open`,
      fix: `${SQLITE_INSTALL} (or use checkpointer: memory / postgres)`,
    };
  }
  try {
    const Database = require('better-sqlite3') as new (file: string) => {
      prepare(sql: string): { get(): unknown };
      close(): void;
    };
    const db = new Database(':memory:');
    const row = db.prepare('select sqlite_version() as v').get() as { v: string };
    db.close();
    return {
      name: 'sqlite',
      status: 'ok',
      detail: `${SQLITE_PACKAGES[0]} found, better-sqlite3 loads (SQLite ${row.v})`,
    };
  } catch (error) {
    return {
      name: 'sqlite',
      status: 'warn',
      detail: `better-sqlite3 is installed but does not load: ${(error as Error).message.split('\n')[0]}`,
      fix: 'rebuild it for this Node: `npm rebuild better-sqlite3` (needs python3, make and a C++ compiler when no prebuilt binary matches)',
    };
  }
}

function checkStateDir(env: NodeJS.ProcessEnv): EnvironmentCheck {
  const dir = agentsStateDir(env);
  const name = 'state folder';
  const setting = `set ${STATE_DIR_ENV} to a folder of your own`;
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    // Not made yet (first run): the nearest existing parent must let us make it.
    let parent = dirname(dir);
    for (;;) {
      try {
        statSync(parent);
        break;
      } catch {
        if (dirname(parent) === parent) break;
        parent = dirname(parent);
      }
    }
    try {
      accessSync(parent, constants.W_OK);
      return { name, status: 'ok', detail: `${dir} (made on first run)` };
    } catch {
      return {
        name,
        status: 'fail',
        detail: `${dir} does not exist and ${parent} is not writable`,
        fix: setting,
      };
    }
  }
  if (!stat.isDirectory())
    return { name, status: 'fail', detail: `${dir} is not a folder`, fix: setting };
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch {
    return {
      name,
      status: 'fail',
      detail: `${dir} is not writable by you`,
      fix: `fix its owner (\`chown -R $USER ${dir}\`) or ${setting}`,
    };
  }
  const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    return {
      name,
      status: 'warn',
      detail: `${dir} belongs to user ${stat.uid}, not you (${uid})`,
      fix: `\`chown -R $USER ${dir}\`, or ${setting}`,
    };
  if ((stat.mode & 0o022) !== 0)
    return {
      name,
      status: 'warn',
      detail: `${dir} is writable by others (mode ${mode}): they could change your sandboxes and checkpoints`,
      fix: `\`chmod go-w ${dir}\``,
    };
  return { name, status: 'ok', detail: `${dir} (yours, mode ${mode})` };
}

/** Runs every environment check, in the order they are printed. */
export function checkEnvironment(options: EnvironmentCheckOptions = {}): EnvironmentCheck[] {
  const env = options.env ?? process.env;
  return [
    checkNode(options.nodeVersion ?? process.versions.node),
    checkGit(options.gitPath ?? 'git'),
    ...checkConfinement(options.confinement),
    checkSqlite(),
    checkStateDir(env),
  ];
}

/** The checks as lines: `ok   git version 2.39.5`, with `→ what to do` under a problem. */
export function formatEnvironment(checks: readonly EnvironmentCheck[]): string {
  const lines = ['Environment:'];
  for (const check of checks) {
    lines.push(`  ${check.status.padEnd(4)}  ${check.name.padEnd(12)}  ${check.detail}`);
    if (check.fix !== undefined) lines.push(`  ${''.padEnd(4)}  ${''.padEnd(12)}  → ${check.fix}`);
  }
  return lines.join('\n');
}
