/**
 * What the sandbox middleware adds to a call: a read-only call with path rewriting (must add
 * microseconds and no git work), and a write call (adds the snapshot). In-memory transport, our
 * entries, middleware composed once like an actor does it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { toStructuredTool } from '../src/mcp/structured-tool.js';
import { createClientCaller } from '../src/mcp/tool-call.js';
import { createMcpToolEntries } from '../src/mcp/tool-adapter.js';
import { listAllTools } from '../src/mcp/list-tools.js';
import { createChangeTrackingMiddleware } from '../src/pipeline/change-tracking.js';
import { createPathRewriteMiddleware } from '../src/pipeline/path-rewrite.js';
import { composeMiddleware, type ToolCallHandler } from '../src/core/tool-middleware.js';
import type { ToolEntry } from '../src/core/tool-descriptor.js';
import { createSandbox } from '../src/sandbox/git/local-sandbox.js';
import { connectBench } from './connect.js';
import { compare, formatMicros, medians, table } from './harness.js';
import { installSpawnCounter } from './spawn-counter.js';
import { invokeText, resultText } from './stacks.js';

/** Middleware figures. */
export interface MiddlewareResult {
  readHandlerPlain: number;
  readHandlerWithMiddleware: number;
  readInvokePlain: number;
  readChainPlain: number;
  readChainWithMiddleware: number;
  readInvokeWithMiddleware: number;
  readCalls: number;
  gitSpawnsDuringReads: number;
  writePlain: number;
  writeWithMiddleware: number;
  snapshotOnly: number;
  writeCalls: number;
  gitSpawnsPerWrite: number;
}

function makeRepo(dir: string): string {
  const repo = path.join(dir, 'repo');
  const env = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: dir,
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@localhost',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@localhost',
  };
  execFileSync('git', ['init', '-q', '-b', 'main', repo], { env, stdio: 'ignore' });
  return repo;
}

function entryNamed(entries: readonly ToolEntry[], name: string): ToolEntry {
  const entry = entries.find((each) => each.descriptor.originalName === name);
  if (entry === undefined) throw new Error(`bench server has no ${name}`);
  return entry;
}

/** Runs the middleware measurements. */
export async function runMiddleware(
  quick: boolean,
  log: (line: string) => void,
): Promise<MiddlewareResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'agents-bench-'));
  try {
    const repo = makeRepo(dir);
    await writeFile(path.join(repo, 'data.txt'), 'x'.repeat(100));
    // A repo of a realistic size makes the snapshot figure honest: 200 small files.
    for (let index = 0; index < 200; index++) {
      await writeFile(path.join(repo, `file-${index}.txt`), `line ${index}\n`.repeat(20));
    }
    execFileSync('git', ['add', '-A'], { cwd: repo, stdio: 'ignore' });
    execFileSync(
      'git',
      ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-m', 'base'],
      {
        cwd: repo,
        stdio: 'ignore',
      },
    );
    await using sandbox = await createSandbox({ source: repo, baseDir: dir });
    await using connection = await connectBench('in-memory');
    const entries = createMcpToolEntries({
      serverName: 'bench',
      tools: await listAllTools(connection.client),
      caller: createClientCaller(connection.client, 'bench'),
      overrides: {
        read_file: { capabilities: { readOnly: true, writes: false }, pathArguments: ['path'] },
        write_file: { capabilities: { readOnly: false, writes: true }, pathArguments: ['path'] },
      },
    });
    const read = entryNamed(entries, 'read_file');
    const write = entryNamed(entries, 'write_file');
    const byId = new Map(entries.map((entry) => [entry.descriptor.id, entry]));
    const plain: ToolCallHandler = (request) =>
      byId.get(request.descriptor.id)!.execute(request.args, request.context, request.capabilities);
    const withMiddleware = composeMiddleware(
      [createPathRewriteMiddleware(sandbox.paths), createChangeTrackingMiddleware(sandbox)],
      plain,
    );
    // The chain alone, over a stub that answers at once: isolates what the middleware adds from
    // the server's own file read (whose syscalls vary by tens of µs on a busy machine).
    const fixed = { content: [{ type: 'text' as const, text: 'x'.repeat(100) }] };
    const stub: ToolCallHandler = () => Promise.resolve(fixed);
    const chainPlain = composeMiddleware([], stub);
    const chainMiddleware = composeMiddleware(
      [createPathRewriteMiddleware(sandbox.paths), createChangeTrackingMiddleware(sandbox)],
      stub,
    );
    const readPlainTool = toStructuredTool(read.descriptor, plain);
    const readTrackedTool = toStructuredTool(read.descriptor, withMiddleware);
    const absolute = path.join(sandbox.root, 'data.txt');
    const expected = 'x'.repeat(100);

    // Correctness first: the logical path reaches the file in the sandbox.
    const check = await withMiddleware({
      descriptor: read.descriptor,
      args: { path: 'data.txt' },
      context: {},
    });
    if (resultText(check) !== expected)
      throw new Error(`read through middleware returned ${resultText(check)}`);
    if (invokeText(await readTrackedTool.invoke({ path: 'data.txt' })) !== expected) {
      throw new Error('read tool through middleware returned the wrong text');
    }

    const counter = installSpawnCounter();
    let readCalls = 0;
    let gitSpawnsDuringReads = 0;
    let readSamples;
    try {
      const options = {
        warmup: quick ? 50 : 200,
        rounds: quick ? 4 : 10,
        perRound: quick ? 50 : 150,
      };
      readCalls = options.rounds * options.perRound * 3;
      counter.reset();
      readSamples = medians(
        await compare(
          [
            {
              name: 'handler plain',
              call: () =>
                plain({ descriptor: read.descriptor, args: { path: absolute }, context: {} }),
            },
            {
              name: 'handler middleware',
              call: () =>
                withMiddleware({
                  descriptor: read.descriptor,
                  args: { path: 'data.txt' },
                  context: {},
                }),
            },
            { name: 'invoke plain', call: () => readPlainTool.invoke({ path: absolute }) },
            {
              name: 'chain plain',
              call: () =>
                chainPlain({ descriptor: read.descriptor, args: { path: absolute }, context: {} }),
            },
            {
              name: 'chain middleware',
              call: () =>
                chainMiddleware({
                  descriptor: read.descriptor,
                  args: { path: 'data.txt' },
                  context: {},
                }),
            },
            { name: 'invoke middleware', call: () => readTrackedTool.invoke({ path: 'data.txt' }) },
          ],
          options,
        ),
      );
      gitSpawnsDuringReads = counter.count(/git/);
    } finally {
      counter.uninstall();
    }
    log(
      `middleware read: handler ${formatMicros(readSamples.get('handler plain')!)} → ${formatMicros(readSamples.get('handler middleware')!)} µs, git spawns ${gitSpawnsDuringReads}`,
    );

    // Writes: every call writes new content, so every snapshot has something to commit.
    let counterValue = 0;
    const writeArgs = (logical: boolean): Record<string, unknown> => ({
      path: logical ? 'out.txt' : path.join(sandbox.root, 'out.txt'),
      content: `write ${counterValue++}\n`,
    });
    const writeCounter = installSpawnCounter();
    let writeSamples;
    // Few samples: a snapshot costs tens of milliseconds, more on a loaded machine.
    const writeOptions = { warmup: 1, rounds: quick ? 2 : 5, perRound: quick ? 2 : 3 };
    let gitSpawnsPerWrite = 0;
    try {
      writeSamples = medians(
        await compare(
          [
            {
              name: 'write plain',
              call: () =>
                plain({ descriptor: write.descriptor, args: writeArgs(false), context: {} }),
            },
            {
              name: 'write middleware',
              call: () =>
                withMiddleware({
                  descriptor: write.descriptor,
                  args: writeArgs(true),
                  context: {},
                }),
            },
            {
              name: 'snapshot only',
              call: async () => {
                await writeFile(path.join(sandbox.root, 'out.txt'), `direct ${counterValue++}\n`);
                return sandbox.snapshot('bench');
              },
            },
          ],
          writeOptions,
        ),
      );
      const trackedCalls = (writeOptions.warmup + writeOptions.rounds * writeOptions.perRound) * 2;
      gitSpawnsPerWrite = writeCounter.count(/git/) / trackedCalls;
    } finally {
      writeCounter.uninstall();
    }
    log(
      `middleware write: ${formatMicros(writeSamples.get('write plain')!)} → ${formatMicros(writeSamples.get('write middleware')!)} µs (snapshot alone ${formatMicros(writeSamples.get('snapshot only')!)} µs)`,
    );
    return {
      readHandlerPlain: readSamples.get('handler plain')!,
      readHandlerWithMiddleware: readSamples.get('handler middleware')!,
      readInvokePlain: readSamples.get('invoke plain')!,
      readInvokeWithMiddleware: readSamples.get('invoke middleware')!,
      readChainPlain: readSamples.get('chain plain')!,
      readChainWithMiddleware: readSamples.get('chain middleware')!,
      readCalls,
      gitSpawnsDuringReads,
      writePlain: writeSamples.get('write plain')!,
      writeWithMiddleware: writeSamples.get('write middleware')!,
      snapshotOnly: writeSamples.get('snapshot only')!,
      writeCalls: writeOptions.rounds * writeOptions.perRound,
      gitSpawnsPerWrite,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Markdown for the middleware section. */
export function middlewareMarkdown(result: MiddlewareResult): string {
  const readAddedHandler = result.readHandlerWithMiddleware - result.readHandlerPlain;
  const readAddedInvoke = result.readInvokeWithMiddleware - result.readInvokePlain;
  const readAddedChain = result.readChainWithMiddleware - result.readChainPlain;
  return [
    'In-memory transport; middleware = path rewrite + change tracking, composed once.',
    'Read-only call: `read_file` with a logical path (rewritten into the sandbox) vs the same call',
    'with the absolute path and no middleware. Write call: `write_file` with new content each time.',
    '',
    table(
      ['call', 'plain (µs)', 'with middleware (µs)', 'added (µs)', 'goal'],
      [
        [
          'read-only, middleware chain alone (stub tool)',
          formatMicros(result.readChainPlain),
          formatMicros(result.readChainWithMiddleware),
          formatMicros(readAddedChain),
          `≤ 10 µs: ${readAddedChain <= 10 ? 'yes' : '**no**'}`,
        ],
        [
          'read-only, composed handler',
          formatMicros(result.readHandlerPlain),
          formatMicros(result.readHandlerWithMiddleware),
          formatMicros(readAddedHandler),
          `≤ 10 µs: ${readAddedHandler <= 10 ? 'yes' : '**no**'}`,
        ],
        [
          'read-only, tool `invoke`',
          formatMicros(result.readInvokePlain),
          formatMicros(result.readInvokeWithMiddleware),
          formatMicros(readAddedInvoke),
          `≤ 10 µs: ${readAddedInvoke <= 10 ? 'yes' : '**no**'}`,
        ],
        [
          'write, composed handler',
          formatMicros(result.writePlain),
          formatMicros(result.writeWithMiddleware),
          formatMicros(result.writeWithMiddleware - result.writePlain),
          `≈ snapshot alone (${formatMicros(result.snapshotOnly)} µs)`,
        ],
      ],
    ),
    '',
    `git processes started during ${result.readCalls.toLocaleString('en-US')} read-only calls: ` +
      `**${result.gitSpawnsDuringReads}** (goal: 0). Git processes per tracked write: ` +
      `${result.gitSpawnsPerWrite.toFixed(1)} (counted by wrapping \`node:child_process\`).`,
  ].join('\n');
}
