import { readdir, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/atomic-write.js';
import { readAuditText } from './audit-log.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';

/**
 * The other live processes that hold `file` open (Linux: read from `/proc/PID/fd`; processes of
 * other users cannot be read and are not listed). Empty elsewhere, where nothing can tell.
 */
export async function processesHolding(file: string): Promise<number[]> {
  if (process.platform !== 'linux') return [];
  let target: string;
  try {
    target = await realpath(file);
  } catch {
    return [];
  }
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const holders: number[] = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    let fds: string[];
    try {
      fds = await readdir(join('/proc', pid, 'fd'));
    } catch {
      continue;
    }
    for (const fd of fds) {
      const link = await readlink(join('/proc', pid, 'fd', fd)).catch(() => '');
      if (link === target) {
        holders.push(Number(pid));
        break;
      }
    }
  }
  return holders;
}

/**
 * Removes the entries of one thread from a JSON-lines audit file; returns how many there were
 * (with `dryRun`, counts them and changes nothing). Other lines are kept byte for byte, torn or
 * foreign lines included. The file is replaced atomically, which a process still appending to
 * the old file would not see: so it is refused (`RUN_ACTIVE`, naming the processes) while
 * another process holds the file open, a run or `agents serve` of any thread. A run that opens
 * the file in the moment between that check and the rename could still lose its first entries.
 */
export async function removeAuditEntries(
  file: string,
  threadId: string,
  options: { dryRun?: boolean } = {},
): Promise<number> {
  const text = await readAuditText(file);
  if (text === undefined) return 0;
  const lines = text.split('\n');
  const kept = lines.filter((line) => threadOf(line) !== threadId);
  const removed = lines.length - kept.length;
  if (removed === 0 || options.dryRun === true) return removed;
  const holders = await processesHolding(file);
  if (holders.length > 0) {
    throw new AgentsError(
      AgentsErrorCode.RunActive,
      `The audit log ${file} is open in process ${holders.join(', ')} (a run or \`agents serve\`); rewriting it now would lose what that process appends. Retry when it has ended.`,
      { details: { file, pids: holders } },
    );
  }
  await writeFileAtomic(file, kept.join('\n'));
  return removed;
}

function threadOf(line: string): string | undefined {
  if (line.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null) return undefined;
    const thread = (value as { thread?: unknown }).thread;
    return typeof thread === 'string' ? thread : undefined;
  } catch {
    return undefined;
  }
}
