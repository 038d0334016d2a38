import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import type { CommandContext } from '../../src/cli/command.js';
import { createCheckpointsCommand } from '../../src/cli/commands/checkpoints.js';
import type { OpenThreadContext } from '../../src/actors/open-thread.js';
import { createRollbackCommand } from '../../src/cli/commands/rollback.js';
import { createSandboxDiffCommand } from '../../src/cli/commands/sandbox.js';
import { AgentsError } from '../../src/errors.js';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { buildGraph, makeRepo, readTree, trackedFileTools } from './helpers.js';

describe('CLI: checkpoints, rollback, sandbox diff', () => {
  let repo: Awaited<ReturnType<typeof makeRepo>>;
  let sandbox: LocalSandbox;
  let graph: ReturnType<typeof buildGraph>;
  let opened: string[];
  let closed: number;
  let openThread: OpenThreadContext;

  beforeEach(async () => {
    repo = await makeRepo();
    sandbox = await createSandbox({ source: repo.dir });
    graph = buildGraph(trackedFileTools(sandbox), sandbox, new MemorySaver());
    await graph.invoke(
      { messages: [new HumanMessage('go')] },
      { configurable: { thread_id: 'cli-1' } },
    );
    opened = [];
    closed = 0;
    openThread = async (workspace, threadId) => {
      opened.push(`${workspace}:${threadId}`);
      const close = async () => {
        closed++;
      };
      // A memory saver: no SQLite file, so `checkpoints` lists through LangGraph.
      const checkpointFile = async () => undefined;
      return { threadId, graph, sandbox, checkpointFile, close, [Symbol.asyncDispose]: close };
    };
  });
  afterEach(async () => {
    await sandbox.close();
    await repo.cleanup();
  });

  function context(argv: string[], json = false): CommandContext & { out: () => string } {
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    return {
      argv,
      workspace: '.agents',
      cwd: repo.dir,
      projectDir: repo.dir,
      json,
      stdout,
      stderr: new PassThrough(),
      stdin: new PassThrough(),
      signal: new AbortController().signal,
      out: () => text,
    };
  }

  it('lists checkpoints, dry-runs and performs a rollback, and shows the sandbox diff', async () => {
    const list = context(['--thread', 'cli-1'], true);
    expect(await createCheckpointsCommand(openThread).run(list)).toBe(0);
    const entries = JSON.parse(list.out()) as Array<{
      checkpointId: string;
      changed: Array<{ path: string }>;
    }>;
    const target = entries.find((entry) =>
      entry.changed.some((change) => change.path === 'a.txt'),
    )!;
    expect(target).toBeDefined();

    const text = context(['--thread', 'cli-1', '--limit', '3']);
    await createCheckpointsCommand(openThread).run(text);
    const lines = text.out().trim().split('\n');
    expect(lines[0]).toMatch(/^CHECKPOINT\s+STEP\s+KIND/);
    // One row per checkpoint under the header, then the legend of the kinds.
    expect(lines.filter((line) => /^[0-9a-f]{8}-/.test(line))).toHaveLength(3);
    expect(lines[4]).toMatch(/^KIND: input = /);

    const diff = context(['--thread', 'cli-1']);
    await createSandboxDiffCommand(openThread).run(diff);
    expect(diff.out().trim().split('\n').sort()).toEqual([
      'A a.txt',
      'A b.txt',
      'A half.txt',
      'D README.md',
      'M src/main.txt',
    ]);

    const before = await readTree(sandbox.root);
    const dry = context(['--thread', 'cli-1', '--to', target.checkpointId, '--dry-run']);
    await createRollbackCommand(openThread).run(dry);
    expect(dry.out()).toContain('Would restore');
    expect(await readTree(sandbox.root)).toEqual(before);

    const real = context(['--thread', 'cli-1', '--to', target.checkpointId], true);
    await createRollbackCommand(openThread).run(real);
    const result = JSON.parse(real.out()) as {
      dryRun: boolean;
      safety: string;
      forkCheckpointId: string;
    };
    expect(result.dryRun).toBe(false);
    expect(result.safety).toMatch(/^[0-9a-f]{40}$/);
    expect(await readTree(sandbox.root)).toEqual({
      'README.md': '# readme\n',
      'a.txt': 'A1',
      'src/main.txt': 'main v1\n',
    });
    expect(opened).toEqual(Array(5).fill('.agents:cli-1'));
    expect(closed).toBe(5);
  });

  it('rejects missing options with INVALID_ARGUMENTS and the usage', async () => {
    const error = await createRollbackCommand(openThread)
      .run(context(['--thread', 'cli-1']))
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(AgentsError.hasCode(error, 'INVALID_ARGUMENTS')).toBe(true);
    expect((error as Error).message).toContain('Missing --to');
    expect((error as Error).message).toContain('Usage: agents rollback');
    expect(opened).toEqual([]);
  });
});
