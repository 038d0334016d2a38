import { isAbsolute, join } from 'node:path';
import { auditLogPath, readAuditLog } from '../../policy/audit-log.js';
import type { AuditEntry } from '../../policy/audit-entry.js';
import { printable, safeJsonLine } from '../../policy/audit-escape.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandArgs, parsePositiveInteger } from '../args.js';

const USAGE = `Usage: agents audit [--thread ID] [--limit N] [--json] [--file PATH]

Shows the audit log of tool calls: time, thread, tool, capability verdicts, the policy decision
and who decided, duration, result size, errors and the snapshot of changed files; and what the
tools' servers asked before running (elicitation, sampling, roots) and who answered or refused. Calls whose
process stopped mid-call show as UNFINISHED; changes no recorded call made (found when the thread
was reopened) as unattributed changes.

Options:
  --thread ID   only calls of this thread
  --limit N     only the last N entries
  --json        one JSON object per line (the raw entries)
  --file PATH   read this audit file (default <workspace>/audit.jsonl)`;

/** Parsed `agents audit` options. */
export interface AuditCommandArgs {
  threadId?: string;
  limit?: number;
  json: boolean;
  file: string;
}

/** Parses `agents audit` arguments; throws `INVALID_ARGUMENTS` (exit code 2) with the usage on bad input. */
export function parseAuditArgs(
  context: Pick<CommandContext, 'argv' | 'workspace' | 'cwd' | 'json'>,
): AuditCommandArgs {
  const values = parseCommandArgs(
    context.argv,
    {
      thread: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      file: { type: 'string' },
    },
    USAGE,
  );
  const limit = parsePositiveInteger(values.limit, 'limit', USAGE);
  const file =
    values.file === undefined
      ? auditLogPath(context.workspace)
      : isAbsolute(values.file)
        ? values.file
        : join(context.cwd, values.file);
  return {
    ...(values.thread === undefined ? {} : { threadId: values.thread }),
    ...(limit === undefined ? {} : { limit }),
    json: values.json === true || context.json,
    file,
  };
}

function capabilityFlags(entry: AuditEntry): string {
  const caps = entry.capabilities;
  const flags: string[] = [];
  if (caps.readOnly.value) flags.push('read');
  if (caps.writes.value) flags.push(`write(${caps.writes.source})`);
  if (caps.destructive.value) flags.push('destructive');
  if (caps.openWorld.value) flags.push('open-world');
  return flags.join(',');
}

/**
 * One human-readable line per entry. Every field is escaped ({@link printable}): a host, reason
 * or error with a newline or ANSI escape in it shows as `\n` / `\x1b`, never as a second line
 * or a repainted terminal.
 */
export function formatAuditEntry(entry: AuditEntry): string {
  return printable(auditLine(entry));
}

function networkLine(net: NonNullable<AuditEntry['network']>): string {
  const target =
    net.host === '*'
      ? 'other hosts'
      : `${net.host.includes(':') ? `[${net.host}]` : net.host}:${net.port}`;
  const verdict = net.decision === 'allow' ? 'ALLOWED' : 'REFUSED';
  const during =
    net.during === undefined || net.during.length === 0
      ? ''
      : ` during call ${net.during.join(', ')}`;
  if (net.repeated !== undefined) {
    return `network ${verdict} ${net.repeated.count} more time(s) in ${net.repeated.windowMs / 1000} s since ${net.repeated.since}: ${net.host === '' ? 'unparsable requests' : target} (${net.protocol}) from server "${net.serverName}"${during}: ${net.reason}`;
  }
  const unparsed = net.unparsed === undefined ? '' : ` [bytes: ${net.unparsed}]`;
  return `network ${verdict} ${net.host === '' ? 'an unparsable request' : target} (${net.protocol}) from server "${net.serverName}"${during}: ${net.reason}${unparsed}`;
}

function auditLine(entry: AuditEntry): string {
  const parts = [entry.time, entry.thread ?? '-', entry.toolId];
  if (entry.event === 'unattributed-changes') {
    parts.push(
      `unattributed changes found on reopen: snapshot ${(entry.snapshot ?? '').slice(0, 12)} (${entry.changed ?? 0} changed)`,
    );
    return parts.join('  ');
  }
  if (entry.event === 'network' && entry.network !== undefined) {
    parts.push(networkLine(entry.network));
    return parts.join('  ');
  }
  if (entry.event === 'tool-call-start') {
    parts.push('UNFINISHED: started, never ended (its process stopped mid-call)');
  } else if (entry.event === 'approval-requested') {
    parts.push('approval requested');
  } else if (entry.event === 'pause-deferred') {
    parts.push('would pause inside a group of read-only calls: run again alone after them');
  } else if (entry.event === 'client-request' && entry.clientRequest !== undefined) {
    const request = entry.clientRequest;
    parts.push(
      `${request.method} from server "${request.serverName}" ${request.outcome}` +
        (request.action === undefined ? '' : ` (${request.action})`),
    );
  } else if (entry.event === 'input-request' && entry.inputRequest !== undefined) {
    const asked = entry.inputRequest;
    parts.push(
      `${asked.method} from server "${asked.serverName}" (round ${asked.round}${asked.key === '' ? '' : `, ${asked.key}`}) ` +
        `${asked.outcome === 'asked' ? 'put to a person' : `${asked.outcome} by ${asked.by}`}` +
        (asked.name === undefined ? '' : ` (${asked.name})`) +
        (asked.action === undefined ? '' : `: ${asked.action}`),
    );
  } else if (entry.policy !== undefined) {
    parts.push(
      `${entry.policy.decision}→${entry.policy.outcome} by ${entry.policy.decidedBy} (${entry.policy.rule})`,
    );
  } else {
    parts.push('no policy');
  }
  parts.push(capabilityFlags(entry), `${entry.durationMs}ms`);
  if (entry.resultBytes !== undefined) parts.push(`${entry.resultBytes}B`);
  if (entry.budget !== undefined && entry.budget.cutBytes > 0)
    parts.push(`cut ${entry.budget.cutBytes}B → ${entry.budget.spilledTo.join(',') || 'not kept'}`);
  if (entry.snapshot !== undefined)
    parts.push(`snapshot ${entry.snapshot.slice(0, 12)} (${entry.changed ?? 0} changed)`);
  if (entry.isError === true)
    parts.push(`ERROR ${(entry.error ?? '').split('\n')[0]!.slice(0, 200)}`);
  return parts.join('  ');
}

/** `agents audit`: reads the workspace's audit log. */
export const auditCommand: Command = {
  path: ['audit'],
  usage: USAGE,
  async run(context) {
    const args = parseAuditArgs(context);
    const { entries, skipped } = await readAuditLog(args.file, {
      ...(args.threadId === undefined ? {} : { threadId: args.threadId }),
      ...(args.limit === undefined ? {} : { limit: args.limit }),
    });
    if (args.json) {
      for (const entry of entries) context.stdout.write(`${safeJsonLine(entry)}\n`);
    } else if (entries.length === 0) {
      context.stdout.write(
        `No audit entries${args.threadId === undefined ? '' : ` for thread ${args.threadId}`} in ${args.file}.\n`,
      );
    } else {
      for (const entry of entries) context.stdout.write(`${formatAuditEntry(entry)}\n`);
    }
    if (skipped > 0)
      context.stderr.write(`Skipped ${skipped} unreadable line(s) in ${args.file}.\n`);
    return 0;
  },
};
