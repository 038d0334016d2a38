import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const EXAMPLE_TIMEOUT_MS = 150_000;

/** Examples besides the main job, with the line each prints once its own checks passed. */
const SELF_CHECKING: Array<[file: string, done: string]> = [
  ['hand-built-graph.ts', 'hand-built graph ok'],
  ['programmatic-actor.ts', 'programmatic actor ok'],
  ['rollback.ts', 'rollback ok'],
  ['serve-actor.ts', 'serve actor ok'],
  ['custom-tool-and-agent-skill.ts', 'custom tool and agent skill ok'],
  ['mcp-client.ts', 'mcp-client self-check ok'],
  ['approvals.ts', 'approvals ok'],
  // The snippets of the README and docs/ (test/examples/snippets.test.ts keeps pages and files
  // equal and requires each to be listed here).
  ['snippets/hand-built-graph.ts', 'echo says: Echo: hi'],
  ['snippets/create-agent.ts', "changed in the sandbox: [ { status: 'A', path: 'hello.txt' } ]"],
  ['snippets/actor-approvals.ts', 'actor approvals ok'],
  ['snippets/errors-throw.ts', 'errors throw ok'],
  ['snippets/policy-pipeline.ts', 'policy pipeline ok'],
  ['snippets/several-machines.ts', 'several machines ok'],
  // docs/replay.md: record a run, then replay the cassette committed next to the snippets.
  ['snippets/replay-record.ts', 'replay record ok'],
  ['snippets/replay-in-a-test.ts', 'replay in a test ok'],
  ['snippets/replay-pieces.ts', 'replay pieces ok'],
];

interface ExampleRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one example as its own Node process (tsx loader), with its working directory and TMPDIR
 * inside `scratch`: every process it starts (servers, sandboxes) then lives under `scratch`,
 * which is how leftovers are found afterwards.
 */
function runExample(file: string, scratch: string, args: string[] = []): Promise<ExampleRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', TSX, join(EXAMPLES, file), ...args],
      {
        cwd: scratch,
        // The repo's tsconfig maps `@agents/langgraph-mcp` to src/, as for a reader in a clone.
        env: {
          ...process.env,
          TMPDIR: scratch,
          NO_COLOR: '1',
          TSX_TSCONFIG_PATH: join(EXAMPLES, '..', 'tsconfig.json'),
        },
        timeout: EXAMPLE_TIMEOUT_MS - 10_000,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, signal: error?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** Live processes whose working directory is inside `dir` (Linux `/proc`; none elsewhere). */
function processesUnder(dir: string): string[] {
  if (!existsSync('/proc/self/cwd')) return [];
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if (!cwd.startsWith(dir)) continue;
      const state = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.[0];
      if (state === 'Z') continue;
      found.push(`${name}: ${readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
    } catch {
      // Exited meanwhile, or not ours to inspect.
    }
  }
  return found;
}

/** Waits (briefly) for helpers such as tsx's esbuild service to exit after their parent. */
async function leftoverProcesses(dir: string): Promise<string[]> {
  let found = processesUnder(dir);
  for (let attempt = 0; attempt < 50 && found.length > 0; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    found = processesUnder(dir);
  }
  return found;
}

/**
 * Temp entries the examples left (`agents-*`), ignoring tsx's compile cache. The servers' run
 * folder (`agents-servers-<uid>`, where spawned process groups are recorded for the orphan
 * reaper) is meant to stay; what must not stay is a record in it, i.e. a server not stopped.
 */
function leftoverTempEntries(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith('agents-'))
    .flatMap((name) =>
      name.startsWith('agents-servers-')
        ? readdirSync(join(dir, name)).map((record) => `${name}/${record}`)
        : [name],
    );
}

describe('examples (each run as a child process)', () => {
  let scratch: string;
  beforeEach(async () => {
    scratch = await realpath(await mkdtemp(join(tmpdir(), 'examples-smoke-')));
  });
  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  async function expectCleanRun(file: string): Promise<ExampleRun> {
    const run = await runExample(file, scratch);
    expect({ file, code: run.code, signal: run.signal, stderr: run.stderr.slice(-2000) }).toEqual({
      file,
      code: 0,
      signal: null,
      stderr: expect.any(String),
    });
    expect(await leftoverProcesses(scratch)).toEqual([]);
    expect(leftoverTempEntries(scratch)).toEqual([]);
    return run;
  }

  it(
    'main-job runs offline from the working tree, rolls back, shows the files restored, reviews and applies the diff, and cleans up',
    async () => {
      const run = await expectCleanRun('main-job.ts');
      const out = run.stdout;
      expect(out).toMatch(/read_text_file .*\n\s+read\s+\(/);
      expect(out).toMatch(/write_file .*\n\s+write \(/);
      expect(out).toContain('changed A notes/plan.md');
      expect(out).toContain('changed M src/greet.ts');
      expect(out).toMatch(/checkpoints of thread "demo-thread": \d+/);
      expect(out).toMatch(/rollback to #\d+/);
      expect(out).toContain(
        'restored: A TODO.txt, D docs/TODO.txt, D docs/usage.md, M src/greet.ts',
      );
      // The tree after the rollback: TODO.txt back at the root, docs/ gone.
      const after = out.slice(out.indexOf('files after:'), out.indexOf('checks'));
      expect(after).toContain('TODO.txt');
      expect(after).not.toContain('docs/');
      expect(after).toContain('export function greet(): string {');
      expect(out).toContain('user repo untouched');
      expect(out).toContain('the sandbox started from the working tree');
      // Review, then apply: the diff against the base (the working tree as it was), then the
      // files written into the project, and nothing else of git changed.
      const review = out.slice(out.indexOf('review:'), out.indexOf('apply:'));
      expect(review).toMatch(/notes\/plan\.md \| 4 \+\+\+\+/);
      expect(review).toContain('+++ b/notes/plan.md');
      expect(review).not.toContain('README.md');
      expect(out).toMatch(/apply: .*\n {2}write {2}notes\/plan\.md\n/);
      expect(out).toContain("applied 1 file(s): the project's files equal the sandbox's");
      expect(out).toMatch(/server stopped \(pid \d+ gone\)/);
      expect(out).toContain('main job ok');
    },
    EXAMPLE_TIMEOUT_MS,
  );

  it(
    'main-job fails with a clear message and a non-zero exit for a model it cannot make',
    async () => {
      const run = await runExample('main-job.ts', scratch, ['--model', 'nosuchprovider:model']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('main job FAILED: Cannot create model "nosuchprovider:model"');
      expect(await leftoverProcesses(scratch)).toEqual([]);
      expect(leftoverTempEntries(scratch)).toEqual([]);
    },
    EXAMPLE_TIMEOUT_MS,
  );

  it('covers every top-level example', () => {
    const covered = ['main-job.ts', ...SELF_CHECKING.map(([file]) => file)].sort();
    expect(
      [
        ...readdirSync(EXAMPLES),
        ...readdirSync(join(EXAMPLES, 'snippets')).map((name) => `snippets/${name}`),
      ]
        .filter((name) => name.endsWith('.ts'))
        .sort(),
    ).toEqual(covered);
  });

  it.each(SELF_CHECKING)(
    '%s exits 0 after its own checks and leaves nothing running',
    async (file, done) => {
      const run = await expectCleanRun(file);
      expect(run.stdout).toContain(done);
    },
    EXAMPLE_TIMEOUT_MS,
  );
});
