/**
 * Long run against a plain LangGraph loop (issue 37): the same scripted model, the same stdio
 * filesystem server (`@modelcontextprotocol/server-filesystem`) and the same SQLite checkpointer,
 * N read-only `read_text_file` calls in turns of 10 parallel calls, once as
 *
 * - a hand-built `StateGraph` (model node + `ToolNode` over `@langchain/mcp-adapters` tools, SDK v1
 *   client), and once as
 * - our actor (sandbox on, policy auto, the server spawned and supervised by the actor).
 *
 * Each stack runs in a fresh child process (so module loading, JIT and RSS are its own), with the
 * V8 CPU profiler on during the run only; self time is grouped by where the code lives (a
 * per-phase profile: the model step, LangGraph's step and checkpoint write, the SDK and its
 * transport, our pipeline, the sandbox).
 *
 *   npx tsx bench/long-run-loop.ts                 # 1,000 calls each
 *   npx tsx bench/long-run-loop.ts --calls 100     # what bench:quick runs
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GOAL_ROW_PREFIX, goalLines, readLastFigures } from './goals.js';
import { profiledPhases } from './profile-phases.js';

const here = fileURLToPath(import.meta.url);
const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000' },
    stack: { type: 'string' },
    'no-profile': { type: 'boolean', default: false },
  },
});
const PER_TURN = 10;
/** Warm-up runs (one turn each) before the timed run, the same for both stacks. */
const WARM_UP_RUNS = 3;
/** Goal from issue 37: ours ≤ 1.2× the plain loop per call. */
const GOAL_RATIO = 1.2;

type Stack = 'plain' | 'ours';

interface Figures {
  stack: Stack;
  calls: number;
  /** Wall ms of the timed run (after the same warm-up runs for both stacks, in the same process). */
  ms: number;
  cpuMs: number;
  rssMiB: number;
  /** Share of profiled CPU time per phase, in percent. */
  phases: Record<string, number>;
  /** Wall ms of each warm-up run (one turn of 10 calls each; the first is the process's first). */
  warmUpMs: number[];
  /** Wall ms from the timed run's start to the end of each turn (its 10th, 20th... result). */
  turnEnds: number[];
  /** Wall ms of the teardown after the timing (plain: the client's close; ours: deactivate). */
  closeMs: number;
  /** Each sandbox snapshot inside the timed run: its wall ms and path (ours only). */
  snapshots: string[];
}

/** Sandbox snapshots seen inside the timed run (ours). */
const snapshots: Array<{ ms: number; scan: string }> = [];

/** One stack, set up: runs a script on a thread, then closes. */
interface Opened {
  /** The scripted model every run uses (its steps are swapped between warm-up and timed runs). */
  model: { steps: readonly unknown[] };
  run(threadId: string, calls: number): Promise<{ seen: number; turnEnds: number[] }>;
  close(): Promise<void>;
}

const serverEntry = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);

function script(calls: number): string {
  const lines: string[] = [];
  for (let made = 0; made < calls;) {
    const items: string[] = [];
    for (let index = 0; index < PER_TURN && made < calls; index++, made++)
      items.push(`{ name: read_text_file, args: { path: README.md }, id: c${made} }`);
    lines.push(`- tool_calls: [${items.join(', ')}]`);
  }
  lines.push('- content: done');
  return `${lines.join('\n')}\n`;
}

async function makeRepo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agents-bench-loop-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'b@example.com');
  git('config', 'user.name', 'B');
  await writeFile(join(dir, 'README.md'), 'hello\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return dir;
}

/** The run under the V8 profiler (unless --no-profile), with its phases. */
function profiled<T>(run: () => Promise<T>): Promise<{ value: T; phases: Figures['phases'] }> {
  const keep = process.env['BENCH_LOOP_PROFILE'];
  return values['no-profile'] === true
    ? run().then((value) => ({ value, phases: {} }))
    : profiledPhases(run, keep && join(keep, `${values.stack ?? 'run'}.cpuprofile`));
}

async function runPlain(dir: string): Promise<Opened> {
  const [{ StateGraph, MessagesAnnotation, END, START }, { ToolNode }, { SqliteSaver }] =
    await Promise.all([
      import('@langchain/langgraph'),
      import('@langchain/langgraph/prebuilt'),
      import('@langchain/langgraph-checkpoint-sqlite'),
    ]);
  const { loadMcpTools } = await import('@langchain/mcp-adapters');
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { createScriptedModel } = await import('../src/actors/scripted-model.js');
  const client = new Client({ name: 'plain-loop', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [serverEntry, dir],
      cwd: dir,
      stderr: 'ignore',
    }),
  );
  const tools = await loadMcpTools('fs', client);
  const scripted = await createScriptedModel({ file: join(dir, 'script.yaml') });
  const model = scripted.bindTools(tools);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('model', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'model')
    .addConditionalEdges('model', (state) => {
      const last = state.messages.at(-1) as { tool_calls?: unknown[] } | undefined;
      return (last?.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
    })
    .addEdge('tools', 'model')
    .compile({ checkpointer: SqliteSaver.fromConnString(join(dir, 'plain.sqlite')) });
  return {
    model: scripted,
    async run(threadId, calls) {
      let seen = 0;
      const turnEnds: number[] = [];
      const started = performance.now();
      const config = { configurable: { thread_id: threadId }, recursionLimit: 10 * calls };
      for await (const update of await graph.stream({ messages: [['user', 'go']] }, config)) {
        const messages = (update as { tools?: { messages?: unknown[] } }).tools?.messages ?? [];
        for (const message of messages) {
          const text = (message as { content?: unknown }).content;
          if (typeof text !== 'string' || !text.includes('hello'))
            throw new Error(`plain loop: unexpected tool result ${JSON.stringify(text)}`);
          seen++;
          if (seen % PER_TURN === 0) turnEnds.push(performance.now() - started);
        }
      }
      return { seen, turnEnds };
    },
    close: () => client.close(),
  };
}

async function runOurs(dir: string): Promise<Opened> {
  const { createActor } = await import('../src/actors/actor.js');
  const { createWorkspaceStore } = await import('../src/workspace/store.js');
  const store = createWorkspaceStore(join(dir, '.agents'));
  await store.put('server', 'fs', {
    transport: 'stdio',
    command: process.execPath,
    // No folder argument: the server takes the sandbox from the actor's MCP roots.
    args: [serverEntry],
  });
  await store.put('skill', 'files', { mcpServers: ['fs'] });
  await store.put('actor', 'bench', {
    skills: ['files'],
    model: 'scripted:script.yaml',
    policy: { mode: 'auto' },
    maxTurns: 100_000,
  });
  const { createScriptedModel } = await import('../src/actors/scripted-model.js');
  // Parsed outside the timing, as for the plain loop (a 1,000-call script is a second of YAML).
  const model = await createScriptedModel({ file: join(dir, 'script.yaml') });
  const sandboxBaseDir = await mkdtemp(join(tmpdir(), 'agents-bench-loop-sandboxes-'));
  const actor = await createActor({ name: 'bench', workspace: store, sandboxBaseDir, model });
  await actor.activate();
  if (actor.sandbox === undefined) throw new Error('ours: the actor has no sandbox');
  // The sandbox's snapshots inside the run, timed (the first of a process is a full scan).
  const sandbox = actor.sandbox;
  const snapshot = sandbox.snapshot.bind(sandbox);
  sandbox.snapshot = async (...args: Parameters<typeof snapshot>) => {
    const start = performance.now();
    const taken = await snapshot(...args);
    snapshots.push({ ms: performance.now() - start, scan: taken.scan ?? 'full' });
    return taken;
  };
  return {
    model,
    async run(threadId) {
      let seen = 0;
      const turnEnds: number[] = [];
      const started = performance.now();
      for await (const event of actor.run('go', { threadId })) {
        if (event.type !== 'tool-call-end') continue;
        if (event.isError) throw new Error(`ours: call failed: ${event.text}`);
        seen++;
        if (seen % PER_TURN === 0) turnEnds.push(performance.now() - started);
      }
      return { seen, turnEnds };
    },
    async close() {
      await actor.deactivate();
      await rm(sandboxBaseDir, { recursive: true, force: true });
    },
  };
}

/** Points the scripted model at other steps (a warm-up run's one turn, then the timed script). */
function useSteps(model: Opened['model'], steps: readonly unknown[]): void {
  (model as { steps: readonly unknown[] }).steps = steps;
}

async function one(stack: Stack, calls: number): Promise<Figures> {
  const dir = await makeRepo();
  try {
    await writeFile(join(dir, 'script.yaml'), script(calls));
    await writeFile(join(dir, 'warm-up.yaml'), script(PER_TURN));
    const { createScriptedModel } = await import('../src/actors/scripted-model.js');
    const warmUp = (await createScriptedModel({ file: join(dir, 'warm-up.yaml') })).steps;
    const opened = stack === 'plain' ? await runPlain(dir) : await runOurs(dir);
    const timed = opened.model.steps;
    // Warm-up runs of one turn each, on their own threads: the first in a fresh process runs
    // module code for the first time (SQLite tables made, the first JSON Schema compiled,
    // crypto's generator seeded...), and the JIT keeps optimising over the next few (one run
    // left the timed run's first turn 2-3x its later turns). Both stacks get the same warm-up;
    // it is reported apart, and the timed run compares turns.
    useSteps(opened.model, warmUp);
    const warmUpMs: number[] = [];
    const warmUpRun = async (): Promise<void> => {
      const start = performance.now();
      const warm = await opened.run(`warm-up-${warmUpMs.length}`, PER_TURN);
      warmUpMs.push(performance.now() - start);
      if (warm.seen !== PER_TURN) throw new Error(`${stack}: warm-up run saw ${warm.seen} calls`);
    };
    while (warmUpMs.length < WARM_UP_RUNS - 1) await warmUpRun();
    // The profiler starts and stops outside the timing (starting it costs 50-100 ms, more for
    // the stack with more code loaded), and the last warm-up run comes after its start: the
    // turns right after it are slower (2-5x the later ones for both stacks when the timed run
    // came first). The profile covers that warm-up turn and the timed run.
    const { value: result, phases } = await profiled(async () => {
      await warmUpRun();
      useSteps(opened.model, timed);
      const cpuStart = process.cpuUsage();
      const started = performance.now();
      const run = await opened.run('timed', calls);
      const ms = performance.now() - started;
      return { ...run, ms, cpu: process.cpuUsage(cpuStart) };
    });
    const closing = performance.now();
    await opened.close();
    const closeMs = performance.now() - closing;
    if (result.seen !== calls)
      throw new Error(`${stack}: expected ${calls} calls, saw ${result.seen}`);
    return {
      stack,
      calls,
      ms: result.ms,
      cpuMs: (result.cpu.user + result.cpu.system) / 1000,
      rssMiB: process.memoryUsage().rss / 2 ** 20,
      phases,
      warmUpMs,
      turnEnds: result.turnEnds,
      closeMs,
      snapshots: snapshots.map(({ ms, scan }) => `${ms.toFixed(0)} ms (${scan})`),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function child(stack: Stack, calls: number): Promise<Figures> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        here,
        '--stack',
        stack,
        '--calls',
        String(calls),
        ...(values['no-profile'] === true ? ['--no-profile'] : []),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.on('close', (code) => {
      if (code !== 0) reject(new Error(`long-run-loop child (${stack}) exited with ${code}`));
      else resolve(JSON.parse(out) as Figures);
    });
  });
}

const f2 = (value: number) => value.toFixed(2);

/** Mean wall ms of turns `from` to `to - 1` (0-based) from the run's turn end times. */
function turnMean(ends: readonly number[], from: number, to: number): number {
  const last = Math.min(to, ends.length);
  if (last <= from) return Number.NaN;
  return ((ends[last - 1] ?? 0) - (ends[from - 1] ?? 0)) / (last - from);
}

if (values.stack !== undefined) {
  process.stdout.write(JSON.stringify(await one(values.stack as Stack, Number(values.calls))));
} else {
  const calls = Number(values.calls);
  const plain = await child('plain', calls);
  const ours = await child('ours', calls);
  const ratio = ours.ms / plain.ms;
  const row = {
    name: `long-run loop, ${calls} calls: ours / plain LangGraph`,
    value: ratio,
    goal: GOAL_RATIO,
  };
  // Under bench/run.ts (BENCH_BUILT) the row goes to its Goals lines and goal-figures.json
  // (GOAL_ROW_PREFIX below); run alone, the goal line (and REGRESSED past it) goes to stderr.
  if (process.env['BENCH_BUILT'] === undefined) {
    const figures = fileURLToPath(new URL('./goal-figures.json', import.meta.url));
    for (const line of goalLines([row], readLastFigures(figures)))
      process.stderr.write(`${line}\n`);
  }
  const phases = [...new Set([...Object.keys(plain.phases), ...Object.keys(ours.phases)])].sort();
  process.stdout.write(
    [
      `One run of ${calls.toLocaleString('en-US')} read-only \`read_text_file\` calls per stack, in turns of`,
      `${PER_TURN} parallel calls, each stack in a fresh process: the same scripted model, the same`,
      'stdio filesystem server, the same SQLite checkpointer. Plain: a hand-built `StateGraph`',
      '(model node + `ToolNode` over `@langchain/mcp-adapters` tools). Ours: the actor, sandbox on,',
      `policy auto. Both stacks are warmed the same way: ${WARM_UP_RUNS} runs of one turn (10 calls, each on`,
      'its own thread) in the process first, then the timed run on a new thread; set-up, warm-up and',
      `the teardown are outside the timing and shown below. Load average (1/5/15 min) at the end: ${loadavg()
        .map((value) => value.toFixed(1))
        .join(' / ')}.`,
      '',
      `| stack | wall ms per call | CPU ms per call | RSS at end (MiB) | ours / plain (goal ≤ ${GOAL_RATIO}×) |`,
      '| --- | ---: | ---: | ---: | ---: |',
      `| plain LangGraph loop | ${f2(plain.ms / calls)} | ${f2(plain.cpuMs / calls)} | ${plain.rssMiB.toFixed(1)} | — |`,
      `| ours (actor, sandbox + policy) | ${f2(ours.ms / calls)} | ${f2(ours.cpuMs / calls)} | ${ours.rssMiB.toFixed(1)} | ${f2(ratio)}× ${ratio <= GOAL_RATIO ? '' : '**REGRESSED**'} |`,
      '',
      'Fixed costs per process (wall ms, outside the timing): the warm-up runs (the first is the',
      'first turn a fresh process makes: code run for the first time) and the teardown (plain: the',
      "client's close; ours: deactivate, which stops the server and removes the sandbox). Inside",
      'the timing, wall ms per turn of 10 calls: early turns (short history: what a run of 100',
      "calls sees) and the last 10 (the plain loop's checkpoints grow with its history).",
      '',
      '| stack | warm-up runs (1 turn each) | timed: first turn | turns 2-10, mean | last 10 turns, mean | teardown |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...[
        ['plain LangGraph loop', plain],
        ['ours (actor, sandbox + policy)', ours],
      ].map(([label, figures]) => {
        const each = figures as Figures;
        const ends = each.turnEnds;
        return `| ${label as string} | ${each.warmUpMs.map((ms) => ms.toFixed(0)).join(', ')} | ${(ends[0] ?? 0).toFixed(0)} | ${turnMean(ends, 1, 10).toFixed(1)} | ${turnMean(ends, Math.max(1, ends.length - 10), ends.length).toFixed(1)} | ${each.closeMs.toFixed(0)} |`;
      }),
      '',
      `Early turns (2-10), ours / plain: ${f2(turnMean(ours.turnEnds, 1, 10) / turnMean(plain.turnEnds, 1, 10))}×; last 10 turns: ${f2(
        turnMean(ours.turnEnds, Math.max(1, ours.turnEnds.length - 10), ours.turnEnds.length) /
          turnMean(plain.turnEnds, Math.max(1, plain.turnEnds.length - 10), plain.turnEnds.length),
      )}×.`,
      '',
      `Ours: sandbox snapshots inside the run: ${ours.snapshots.join(', ') || 'none'}.`,
      '',
      'Per-phase profile of the timed run and the last warm-up turn (V8 sampling profiler, self',
      'time grouped by where the code lives; ms per call = share of the run × wall ms per call):',
      '',
      '| phase | plain ms/call | ours ms/call | plain % | ours % |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...phases.map((phase) => {
        const mine = ours.phases[phase] ?? 0;
        const theirs = plain.phases[phase] ?? 0;
        const perCall = (share: number, figures: Figures) =>
          f2((share / 100) * (figures.ms / calls));
        return `| ${phase} | ${perCall(theirs, plain)} | ${perCall(mine, ours)} | ${theirs.toFixed(1)} % | ${mine.toFixed(1)} % |`;
      }),
    ].join('\n') + '\n',
  );
  process.stdout.write(`${GOAL_ROW_PREFIX}${JSON.stringify(row)}\n`);
}
