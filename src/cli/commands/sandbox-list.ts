import type { SandboxEntry } from '../../sandbox/sandbox-inventory.js';
import { agentsStateDir } from '../../sandbox/state-dir.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandArgs, storeOf, usageError } from '../args.js';
import { formatTable, printJson, println } from '../output.js';

const LIST_USAGE = `Usage: agents sandbox list [--all] [--json]

Lists the sandboxes kept in the per-user state folder ($AGENTS_STATE_DIR, else
$XDG_STATE_HOME/agents, else ~/.local/state/agents) for this project: the thread sandboxes of its
workspace (kept for checkpoints and rollback) and its run sandboxes (--keep-sandbox, or runs
that were killed), with their size on disk, age and last run. Oldest last run first.
  --all    every project in the state folder, not only this one
  --json   {stateDir, scope, totalBytes, sandboxes: [...]}; times in ms since the epoch`;

const PRUNE_USAGE = `Usage: agents sandbox prune [--older-than AGE] [--dry-run] [--all] [--json]

Removes the sandboxes \`agents sandbox list\` shows whose last run is older than AGE (default
7d): run sandboxes, and thread sandboxes with their thread record (the thread's checkpoints
stay in the checkpoint file; \`agents thread remove\` drops those too). Never one a live run or
rollback holds, nothing outside the state folder, nothing in your repo. Then stops the MCP
servers killed runs left running, as \`agents doctor\` does.
  --older-than AGE   a number with a unit: 30m, 12h, 7d, 2w (0 for every idle sandbox)
  --dry-run          list what would be removed, remove nothing
  --all              every project in the state folder, not only this one`;

const DEFAULT_OLDER_THAN = '7d';
const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** `7d` → ms; `0` is zero. Anything else throws a usage error naming the option. */
export function parseAge(value: string, option: string, usage: string): number {
  const match = /^(\d+)([smhdw]?)$/.exec(value.trim());
  if (match === null || (match[2] === '' && match[1] !== '0')) {
    throw usageError(
      `--${option} takes a number with a unit (30m, 12h, 7d, 2w; 0 for none), got "${value}".`,
      usage,
    );
  }
  return Number(match[1]) * (UNIT_MS[match[2]!] ?? 0);
}

/** `812 B`, `12.3 KB`, `1.2 MB`, `3.40 GB` (powers of 1024). */
export function formatDiskSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

/** `45s`, `12m`, `5h`, `3d`: how long ago, in its largest whole unit. */
export function formatAgo(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

function stateOf(entry: SandboxEntry): string {
  if (entry.activePid !== undefined) return `in use (pid ${entry.activePid})`;
  if (entry.status === 'no-sandbox') return 'record only (sandbox gone)';
  if (entry.status === 'incomplete') return 'incomplete (a start was cut short)';
  if (entry.status === 'legacy') return 'older version (remove by hand)';
  return 'idle';
}

/** The table `sandbox list` and `sandbox prune` print: plain text, no colour, pipe-safe. */
function formatEntries(entries: readonly SandboxEntry[], now: number, all: boolean): string {
  const rows = entries.map((entry) => [
    ...(all ? [entry.project] : []),
    entry.threadId ?? (entry.kind === 'run' ? '(run)' : '?'),
    entry.actor ?? '-',
    entry.sandboxId ?? '-',
    formatDiskSize(entry.sizeBytes),
    formatAgo(now - entry.createdAt),
    `${formatAgo(now - entry.lastUsedAt)} ago`,
    stateOf(entry),
  ]);
  return formatTable(
    [...(all ? ['PROJECT'] : []), 'THREAD', 'ACTOR', 'SANDBOX', 'SIZE', 'AGE', 'LAST RUN', 'STATE'],
    rows,
  );
}

function entryJson(entry: SandboxEntry): Record<string, unknown> {
  return { ...entry };
}

/** What `list` and `prune` look at: everything, or this project's sandboxes. */
type Scope = { all: true } | { sources: string[]; workspaceRoot: string };

/** The scope of this project: its workspace's threads and the run sandboxes of its sources. */
async function scopeOf(context: CommandContext, all: boolean): Promise<Scope> {
  if (all) return { all: true };
  const store = storeOf(context);
  // Actors may make sandboxes from another folder than the project (`sandbox.source`).
  const actors = await store.list('actor').catch(() => ({ records: [] }));
  const sources = new Set([context.projectDir]);
  for (const record of actors.records) {
    if (record.value.sandbox.enabled) sources.add(store.resolvePath(record.value.sandbox.source));
  }
  return { sources: [...sources], workspaceRoot: store.root };
}

/** `agents sandbox list [--all]`: the sandboxes on disk, their size, age and last run. */
export const sandboxListCommand: Command = {
  path: ['sandbox', 'list'],
  usage: LIST_USAGE,
  async run(context: CommandContext): Promise<number> {
    const values = parseCommandArgs(context.argv, { all: { type: 'boolean' } }, LIST_USAGE);
    const all = values.all === true;
    // Loaded on use: the sandbox modules bring git.
    const { listSandboxes } = await import('../../sandbox/sandbox-inventory.js');
    const scope = await scopeOf(context, all);
    const entries = await listSandboxes({
      ...('sources' in scope
        ? { sources: scope.sources, workspaceRoots: [scope.workspaceRoot] }
        : { all: true }),
      signal: context.signal,
    });
    const totalBytes = entries.reduce((sum, entry) => sum + entry.sizeBytes, 0);
    if (context.json) {
      printJson(context.stdout, {
        stateDir: agentsStateDir(),
        scope: all ? 'all' : 'project',
        totalBytes,
        sandboxes: entries.map(entryJson),
      });
      return 0;
    }
    if (entries.length === 0) {
      println(
        context.stdout,
        `No sandboxes kept ${all ? 'in' : 'for this project in'} ${agentsStateDir()}.`,
      );
      return 0;
    }
    println(context.stdout, formatEntries(entries, Date.now(), all));
    println(
      context.stdout,
      `\n${entries.length} sandbox(es), ${formatDiskSize(totalBytes)} in ${agentsStateDir()}.`,
    );
    return 0;
  },
};

/** `agents sandbox prune [--older-than 7d] [--dry-run] [--all]`: bounds disk use. */
export const sandboxPruneCommand: Command = {
  path: ['sandbox', 'prune'],
  usage: PRUNE_USAGE,
  async run(context: CommandContext): Promise<number> {
    const values = parseCommandArgs(
      context.argv,
      {
        'older-than': { type: 'string' },
        'dry-run': { type: 'boolean' },
        all: { type: 'boolean' },
      },
      PRUNE_USAGE,
    );
    const olderThanMs = parseAge(
      values['older-than'] ?? DEFAULT_OLDER_THAN,
      'older-than',
      PRUNE_USAGE,
    );
    const all = values.all === true;
    const dryRun = values['dry-run'] === true;
    const scope = await scopeOf(context, all);
    const [{ pruneSandboxes }, { reapOrphanedServers }] = await Promise.all([
      import('../../sandbox/prune-sandboxes.js'),
      import('../../servers/orphan-reaper.js'),
    ]);
    const now = Date.now();
    const { entries: removed, busy: skipped } = await pruneSandboxes({
      ...scope,
      olderThanMs,
      now,
      dryRun,
      signal: context.signal,
    });
    const freed = removed.reduce((sum, entry) => sum + entry.sizeBytes, 0);
    // A dry run changes nothing, servers included.
    const reaped = dryRun ? undefined : await reapOrphanedServers();
    if (context.json) {
      printJson(context.stdout, {
        dryRun,
        olderThanMs,
        freedBytes: freed,
        removed: removed.map(entryJson),
        busy: skipped.map(entryJson),
        ...(reaped === undefined
          ? {}
          : {
              reapedServers: reaped.reaped.map(({ serverName, pgid, hostPid }) => ({
                serverName,
                pgid,
                hostPid,
              })),
            }),
      });
      return 0;
    }
    if (removed.length === 0) {
      println(
        context.stdout,
        `No sandbox idle for longer than ${values['older-than'] ?? DEFAULT_OLDER_THAN}${all ? '' : ' in this project'}.`,
      );
    } else {
      println(context.stdout, formatEntries(removed, now, all));
      println(
        context.stdout,
        `\n${dryRun ? 'Would remove' : 'Removed'} ${removed.length} sandbox(es), ${formatDiskSize(freed)}.${dryRun ? ' Nothing was removed (--dry-run).' : ''}`,
      );
    }
    for (const entry of skipped) {
      println(context.stderr, `Left ${entry.dir}: a run took it while pruning.`);
    }
    for (const record of reaped?.reaped ?? []) {
      println(
        context.stdout,
        `Stopped server "${record.serverName}" (process group ${record.pgid}), left running by killed run ${record.hostPid}.`,
      );
    }
    return 0;
  },
};
