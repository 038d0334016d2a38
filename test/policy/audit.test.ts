import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditCommand, parseAuditArgs } from '../../src/cli/commands/audit.js';
import type { CommandContext } from '../../src/cli/command.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import { auditLogPath, createAuditLog, readAuditLog } from '../../src/policy/audit-log.js';
import { createAuditMiddleware } from '../../src/policy/audit.js';
import { createPolicyMiddleware } from '../../src/policy/policy-middleware.js';
import {
  PauseDeferred,
  deferPauseIfGrouped,
  runWithPausesDeferred,
} from '../../src/policy/pause-deferral.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { ResultMetaKey } from '../../src/core/tool-descriptor.js';
import { descriptorFor } from './helpers.js';

const writer = descriptorFor('fs', { name: 'write_file' });
const reader = descriptorFor(
  'fs',
  { name: 'read_file', annotations: { readOnlyHint: true } },
  { trusted: true },
);

let workspace: string;
beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'audit-'));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function context(argv: string[]): CommandContext & { out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return {
    argv,
    workspace,
    cwd: workspace,
    projectDir: workspace,
    json: false,
    stdout,
    stderr,
    stdin: new PassThrough(),
    signal: new AbortController().signal,
    out: () => out,
    err: () => err,
  };
}

async function recordCalls(): Promise<void> {
  await using log = createAuditLog(auditLogPath(workspace));
  let clock = 1_000;
  const handler = composeMiddleware(
    [
      createAuditMiddleware({ log, actor: 'coder', now: () => (clock += 5) }),
      createPolicyMiddleware({ policy: parsePolicy({ mode: 'read-only' }) }),
    ],
    async (request) => {
      if (request.args['fail'] === true) throw new Error('transport closed');
      return {
        content: [{ type: 'text', text: 'hello' }],
        _meta: {
          [ResultMetaKey.Change]: {
            toolId: request.descriptor.id,
            snapshot: 'f00dfeedbeef0000',
            parent: 'p',
            changed: [{ status: 'M', path: 'a' }],
          },
        },
      };
    },
  );
  await handler({
    descriptor: reader,
    args: { path: 'a' },
    context: { threadId: 't1', toolCallId: 'c1' },
  });
  await handler({
    descriptor: writer,
    args: { path: 'a' },
    context: { threadId: 't2', toolCallId: 'c2' },
  });
  await expect(
    handler({
      descriptor: reader,
      args: { fail: true },
      context: { threadId: 't1', config: { configurable: { thread_id: 't1' } } },
    }),
  ).rejects.toThrow('transport closed');
}

describe('audit log', () => {
  it('records each call with actor, thread, verdicts, decision, duration, size, error and snapshot', async () => {
    await recordCalls();
    const { entries, skipped } = await readAuditLog(auditLogPath(workspace));
    expect(skipped).toBe(0);
    expect(entries).toHaveLength(3);
    expect(entries[0]).toMatchObject({
      event: 'tool-call',
      actor: 'coder',
      thread: 't1',
      toolCallId: 'c1',
      toolId: 'mcp:fs/read_file',
      capabilities: {
        readOnly: { value: true, source: reader.capabilities.readOnly.source },
        writes: { value: false },
      },
      policy: { decision: 'allow', outcome: 'allowed', decidedBy: 'policy' },
      durationMs: 5,
      resultBytes: 5,
      isError: false,
      snapshot: 'f00dfeedbeef0000',
      changed: 1,
    });
    expect(entries[1]).toMatchObject({
      thread: 't2',
      isError: true,
      policy: { decision: 'deny', outcome: 'denied', rule: 'mode read-only' },
    });
    expect(entries[1]?.error).toContain('read-only');
    expect(entries[2]).toMatchObject({ thread: 't1', isError: true, error: 'transport closed' });
    expect((await readAuditLog(auditLogPath(workspace), { threadId: 't1' })).entries).toHaveLength(
      2,
    );
  });

  it('ends a pause deferred inside a group as pause-deferred, not as an approval or an unfinished call', async () => {
    {
      await using log = createAuditLog(auditLogPath(workspace));
      const handler = composeMiddleware(
        [createAuditMiddleware({ log, actor: 'coder' })],
        (request) =>
          runWithPausesDeferred(async () => {
            deferPauseIfGrouped(`Approval of ${request.descriptor.id}`);
            return { content: [] };
          }),
      );
      const attempt = handler({
        descriptor: reader,
        args: { path: 'a' },
        context: { threadId: 't1', toolCallId: 'c1' },
      });
      await expect(attempt).rejects.toBeInstanceOf(PauseDeferred);
    }
    const raw = await readAuditLog(auditLogPath(workspace), { raw: true });
    expect(raw.entries.map((entry) => entry.event)).toEqual(['tool-call-start', 'pause-deferred']);
    const { entries } = await readAuditLog(auditLogPath(workspace));
    expect(entries.map((entry) => entry.event)).toEqual(['pause-deferred']);
    const ctx = context([]);
    await auditCommand.run(ctx);
    expect(ctx.out()).toContain('would pause inside a group of read-only calls');
    expect(ctx.out()).not.toContain('UNFINISHED');
    expect(ctx.out()).not.toContain('approval requested');
  });

  it('skips a torn line instead of failing, and refuses appends after close', async () => {
    await recordCalls();
    await appendFile(auditLogPath(workspace), '{"time":"2026-01-01T00:00:00Z","toolI');
    const { entries, skipped } = await readAuditLog(auditLogPath(workspace));
    expect(entries).toHaveLength(3);
    expect(skipped).toBe(1);
    const log = createAuditLog(join(workspace, 'x.jsonl'));
    await log.close();
    await expect(log.append(entries[0]!)).rejects.toSatisfy((error: unknown) =>
      AgentsError.hasCode(error, 'CLOSED'),
    );
  });

  it('writes parallel appends in call order, each resolved only once its line is in the file', async () => {
    await recordCalls();
    const [first] = (await readAuditLog(auditLogPath(workspace))).entries;
    const file = join(workspace, 'parallel.jsonl');
    const log = createAuditLog(file);
    // 25 appends in one go (a turn of parallel calls): each promise resolves with its line
    // already in the file, and the lines keep call order.
    const appended = Array.from({ length: 25 }, (_, index) =>
      log.append({ ...first!, toolCallId: `c${index}` }).then(() => readFile(file, 'utf8')),
    );
    const seen = await Promise.all(appended);
    seen.forEach((text, index) => expect(text).toContain(`"toolCallId":"c${index}"`));
    await log.close();
    const { entries, skipped } = await readAuditLog(file);
    expect(skipped).toBe(0);
    expect(entries.map((entry) => entry.toolCallId)).toEqual(
      Array.from({ length: 25 }, (_, index) => `c${index}`),
    );
  });

  it('agents audit prints readable lines, filters by thread, and prints raw JSON with --json', async () => {
    await recordCalls();
    const plain = context(['--thread', 't2']);
    expect(await auditCommand.run(plain)).toBe(0);
    const lines = plain.out().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('mcp:fs/write_file');
    expect(lines[0]).toContain('deny→denied by policy (mode read-only)');
    expect(lines[0]).toContain('ERROR');

    const json = context(['--json', '--limit', '2']);
    expect(await auditCommand.run(json)).toBe(0);
    const parsed = json
      .out()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { toolId: string; thread?: string });
    expect(parsed.map((entry) => entry.thread)).toEqual(['t2', 't1']);

    const empty = context(['--thread', 'nope']);
    await auditCommand.run(empty);
    expect(empty.out()).toContain('No audit entries for thread nope');
  });

  it('rejects bad arguments with the usage text', () => {
    expect(() =>
      parseAuditArgs({ argv: ['--limit', '0'], workspace, cwd: workspace, json: false }),
    ).toThrow(/--limit/);
    expect(() =>
      parseAuditArgs({ argv: ['--bogus'], workspace, cwd: workspace, json: false }),
    ).toThrow(/Usage: agents audit/);
    expect(
      parseAuditArgs({ argv: ['--file', 'x.jsonl'], workspace, cwd: '/tmp', json: true }),
    ).toEqual({ json: true, file: '/tmp/x.jsonl' });
    // A typo on the command line is a usage error (exit code 2), not a config error (3).
    for (const argv of [['--limit', '5x'], ['--bogus']]) {
      let caught: unknown;
      try {
        parseAuditArgs({ argv, workspace, cwd: workspace, json: false });
      } catch (error) {
        caught = error;
      }
      expect(AgentsError.hasCode(caught, AgentsErrorCode.InvalidArguments)).toBe(true);
      expect(exitCodeFor(caught)).toBe(2);
    }
  });
});
