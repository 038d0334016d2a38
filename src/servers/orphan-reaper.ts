import { isProcessAlive } from '../core/process-alive.js';
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import {
  groupMembers,
  killProcessGroup,
  readProcStat,
  sleep,
  type ProcStat,
} from './process-group.js';
import { silentServerLogger, type ServerLogger } from './server-logger.js';

/** Environment variable that moves the run directory (tests, several installations). */
export const RUN_DIR_ENV = 'AGENTS_SERVERS_RUN_DIR';

/**
 * The directory where spawned server process groups are recorded, so that a host killed with
 * SIGKILL (whose exit hook never ran) has its servers reaped on the next start. Per user:
 * `$AGENTS_SERVERS_RUN_DIR`, else `<tmpdir>/agents-servers-<uid>`.
 */
export function defaultRunDir(): string {
  const fromEnv = process.env[RUN_DIR_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  return join(tmpdir(), `agents-servers-${uid}`);
}

/** One spawned server process group, as written to `<runDir>/<hostPid>-<pgid>.json`. */
export interface ServerProcessRecord {
  /** The host (this library's process) that spawned the server. */
  hostPid: number;
  /** The host's start time (Linux clock ticks since boot), so a reused host pid is not "alive". */
  hostStartTime: number | null;
  /** Process group id = the server's pid (it leads its own group and session). */
  pgid: number;
  /** The server's start time (clock ticks since boot); identifies the group's leader. */
  startTime: number | null;
  serverName: string;
  /** The redacted command line, for logs. */
  target: string;
  /** The executable as spawned, for logs. */
  command: string;
  createdAt: string;
}

/** What {@link reapOrphanedServers} did. */
export interface ReapReport {
  /** Groups of dead hosts that were killed. */
  reaped: ServerProcessRecord[];
  /** Records dropped without killing: the group was gone, or its identity did not match. */
  dropped: ServerProcessRecord[];
}

/** The start time of a process (Linux), or null when unknown. */
export function processStartTime(pid: number | 'self'): number | null {
  return readProcStat(pid)?.startTime ?? null;
}

/** alive: signalable or EPERM; a zombie counts as dead. */
function isAlive(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  const stat = readProcStat(pid);
  return stat === undefined ? true : stat.state !== 'Z' && stat.state !== 'X';
}

function recordPath(runDir: string, hostPid: number, pgid: number): string {
  return join(runDir, `${hostPid}-${pgid}.json`);
}

/**
 * Creates the run directory (mode 0700) and refuses one that is a symlink or belongs to another
 * user: its files decide which process groups get killed.
 */
function ensureRunDir(runDir: string): boolean {
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const stats = lstatSync(runDir);
  if (!stats.isDirectory()) return false;
  if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) return false;
  return true;
}

let selfStartTime: number | null | undefined;

/**
 * Records a freshly spawned server group. Returns a function that removes the record (call it
 * once the group is gone). Never throws: without a record only the SIGKILL-host case is lost.
 */
export function recordServerProcess(
  runDir: string,
  record: Omit<ServerProcessRecord, 'hostPid' | 'hostStartTime' | 'startTime' | 'createdAt'>,
  logger: ServerLogger = silentServerLogger,
): () => void {
  selfStartTime ??= processStartTime('self');
  const full: ServerProcessRecord = {
    hostPid: process.pid,
    hostStartTime: selfStartTime,
    startTime: processStartTime(record.pgid),
    createdAt: new Date().toISOString(),
    ...record,
  };
  const file = recordPath(runDir, process.pid, record.pgid);
  try {
    if (!ensureRunDir(runDir)) {
      logger.warn(
        `Run directory ${runDir} is not a private directory of this user; not recording server pids`,
      );
      return () => undefined;
    }
    writeFileSync(file, `${JSON.stringify(full)}\n`, { mode: 0o600 });
  } catch (error) {
    logger.warn(
      `Could not record server process group ${record.pgid} in ${runDir}: ${errorMessage(error)}`,
    );
    return () => undefined;
  }
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  };
}

function parseRecord(text: string): ServerProcessRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const isInt = (field: unknown): field is number => Number.isInteger(field) && Number(field) > 1;
  const isTime = (field: unknown): field is number | null =>
    field === null || Number.isInteger(field);
  if (
    !isInt(record['hostPid']) ||
    !isInt(record['pgid']) ||
    !isTime(record['hostStartTime']) ||
    !isTime(record['startTime']) ||
    typeof record['command'] !== 'string'
  ) {
    return undefined;
  }
  return {
    hostPid: record['hostPid'],
    hostStartTime: record['hostStartTime'],
    pgid: record['pgid'],
    startTime: record['startTime'],
    serverName: typeof record['serverName'] === 'string' ? record['serverName'] : '?',
    target: typeof record['target'] === 'string' ? record['target'] : '?',
    command: record['command'],
    createdAt: typeof record['createdAt'] === 'string' ? record['createdAt'] : '',
  };
}

/** True when the host that wrote the record is gone (or its pid now belongs to another process). */
function hostIsDead(record: ServerProcessRecord): boolean {
  if (record.hostPid === process.pid) return false;
  if (!isAlive(record.hostPid)) return true;
  const now = processStartTime(record.hostPid);
  return record.hostStartTime !== null && now !== null && now !== record.hostStartTime;
}

/**
 * Decides whether the live group `pgid` is still the one the record describes. Pids and group
 * ids are reused, so a bare "the group exists" is never enough to kill it:
 * - leader alive: the same start time (clock ticks since boot: a reused pid would have to be
 *   handed out within the same tick) and still the leader of its own session (`setsid`);
 * - leader gone (grandchildren left): every member is in the session the server created
 *   (session id = pgid) and started no earlier than the server did.
 * The command line is not compared: wrappers (`npx`, scripts that `exec`) legitimately change it.
 */
function isSameGroup(
  record: ServerProcessRecord,
  members: Array<{ pid: number; stat: ProcStat }>,
): boolean {
  if (record.startTime === null) return false;
  const startTime = record.startTime;
  const leader = members.find((member) => member.pid === record.pgid);
  if (leader) {
    return leader.stat.startTime === startTime && leader.stat.session === record.pgid;
  }
  return members.every(
    (member) => member.stat.session === record.pgid && member.stat.startTime >= startTime,
  );
}

/**
 * Kills the server process groups left behind by hosts that died without running their exit
 * hook (SIGKILL, OOM killer, power loss), as recorded in `runDir`. A record is acted on only
 * when its host is dead and the group is provably the one recorded (start time, command line,
 * session; see above): an unrelated process that reused a pid is never signalled. Groups get
 * SIGTERM, then SIGKILL after `graceMs` (default 500 ms). Records of gone groups are removed.
 * Linux only (it needs /proc for the identity checks); elsewhere it does nothing. Never throws.
 */
export async function reapOrphanedServers(
  options: { runDir?: string; graceMs?: number; logger?: ServerLogger } = {},
): Promise<ReapReport> {
  const runDir = options.runDir ?? defaultRunDir();
  const logger = options.logger ?? silentServerLogger;
  const report: ReapReport = { reaped: [], dropped: [] };
  if (process.platform !== 'linux') return report;
  let files: string[];
  try {
    if (!lstatSync(runDir).isDirectory()) return report;
    files = readdirSync(runDir).filter((file) => /^\d+-\d+\.json$/.test(file));
  } catch {
    return report;
  }
  const toKill: Array<{ record: ServerProcessRecord; file: string }> = [];
  for (const file of files) {
    const path = join(runDir, file);
    let record: ServerProcessRecord | undefined;
    try {
      record = parseRecord(readFileSync(path, 'utf8'));
    } catch {
      continue;
    }
    if (record === undefined) {
      logger.warn(`Ignoring an unreadable server pid record ${path}`);
      continue;
    }
    if (!hostIsDead(record)) continue;
    const members = groupMembers(record.pgid) ?? [];
    if (members.length > 0 && isSameGroup(record, members)) {
      toKill.push({ record, file: path });
    } else {
      if (members.length > 0) {
        logger.warn(
          `Not killing process group ${record.pgid}: it no longer matches server "${record.serverName}" (${record.target}) recorded by dead host ${record.hostPid}`,
        );
      }
      report.dropped.push(record);
      removeFile(path);
    }
  }
  if (toKill.length === 0) return report;
  for (const { record } of toKill) {
    logger.warn(
      `Reaping server "${record.serverName}" (${record.target}, process group ${record.pgid}) left running by dead host ${record.hostPid}`,
    );
    killProcessGroup(record.pgid, 'SIGTERM');
  }
  const deadline = Date.now() + (options.graceMs ?? 500);
  while (
    Date.now() < deadline &&
    toKill.some(({ record }) => (groupMembers(record.pgid) ?? []).length > 0)
  ) {
    await sleep(25);
  }
  for (const { record, file } of toKill) {
    const members = groupMembers(record.pgid) ?? [];
    // Checked again: between the checks the group could have ended and its id been reused.
    if (members.length > 0 && isSameGroup(record, members))
      killProcessGroup(record.pgid, 'SIGKILL');
    report.reaped.push(record);
    removeFile(file);
  }
  return report;
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already removed (another host reaping at the same time)
  }
}

const reapedRunDirs = new Map<string, Promise<ReapReport>>();

/**
 * {@link reapOrphanedServers} at most once per process and run directory (the first spawn and
 * every new server manager call it; only the first scan does work). Never rejects.
 */
export function reapOrphanedServersOnce(
  options: { runDir?: string; logger?: ServerLogger } = {},
): Promise<ReapReport> {
  const runDir = options.runDir ?? defaultRunDir();
  let pending = reapedRunDirs.get(runDir);
  if (pending === undefined) {
    pending = reapOrphanedServers({ ...options, runDir }).catch((): ReapReport => ({
      reaped: [],
      dropped: [],
    }));
    reapedRunDirs.set(runDir, pending);
  }
  return pending;
}
