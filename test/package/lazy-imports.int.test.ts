/**
 * Issue 29, "load only what is used": importing the `/adapter` entry or the package root, and
 * starting `agents --help` or `agents sandbox diff` (on a thread whose run recorded what it needs
 * from the actor's config), must not load zod, yaml, either MCP SDK, LangChain or LangGraph.
 * Each runs in a child process where those packages fail to resolve as if not installed
 * (test/fixtures/hide-packages.mjs), so an eager import of any of them, anywhere on the import
 * path, fails here; the last case shows the hiding bites. (`bench/cli-startup.ts` times them.)
 */
import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { describeActorFile } from '../../src/actors/thread-config.js';
import { recordThreadConfig, threadSandboxDir } from '../../src/actors/thread-sandbox.js';
import { TSX_LOADER } from '../fixtures/fixture-process.js';
import { ACTOR, editThread, makeProject, removeProject } from '../sandbox/deliver/helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const HIDE = join(ROOT, 'test', 'fixtures', 'hide-packages.mjs');
const COUNTER = join(ROOT, 'bench', 'module-counter.mjs');
const HEAVY = [
  'zod',
  'yaml',
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/core',
  '@modelcontextprotocol/sdk',
  '@langchain/core',
  '@langchain/langgraph',
  '@langchain/langgraph-checkpoint',
  'ajv',
].join(',');
const run = promisify(execFile);

function withHeavyHidden(args: string[], cwd = ROOT) {
  return run(process.execPath, ['--import', TSX_LOADER, '--import', HIDE, ...args], {
    cwd,
    env: { ...process.env, AGENTS_HIDE_PACKAGES: HEAVY, NO_COLOR: '1' },
  });
}

/** Runs `args` with `bench/module-counter.mjs`: its stdout and the module files it loaded. */
async function counted(args: string[], cwd: string) {
  const out = join(await mkdtemp(join(tmpdir(), 'agents-modules-')), 'modules.txt');
  const { stdout } = await run(
    process.execPath,
    ['--import', TSX_LOADER, '--import', pathToFileURL(COUNTER).href, ...args],
    { cwd, env: { ...process.env, BENCH_MODULES_OUT: out } },
  );
  const loaded = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
  await rm(dirname(out), { recursive: true, force: true });
  return { stdout, loaded };
}

const importing = (file: string) => [
  '--input-type=module',
  '-e',
  `const m = await import(${JSON.stringify(pathToFileURL(join(ROOT, file)).href)}); console.log(Object.keys(m).sort().join(','))`,
];

describe.concurrent('entries load without the heavy packages (issue 29)', () => {
  it('the /adapter entry and the root import, with their functions', async () => {
    const [adapter, root] = await Promise.all([
      withHeavyHidden(importing('src/adapter.ts')),
      withHeavyHidden(importing('src/index.ts')),
    ]);
    expect(adapter.stdout).toContain('createMcpToolAdapter');
    expect(root.stdout).toContain('createMcpToolAdapter');
    expect(root.stdout).toContain('parseYaml');
    expect(root.stdout).toContain('createActor');
  });

  it('agents --help starts and lists the commands', async () => {
    const help = await withHeavyHidden([join(ROOT, 'src', 'cli', 'main.ts'), '--help']);
    expect(help.stdout).toContain('checkpoints');
    expect(help.stdout).toContain('sandbox diff');
  });

  it('agents sandbox diff opens a thread from what its run recorded; an edited actor config is read', async () => {
    const project = await makeProject('agents-lazy-diff-');
    try {
      await editThread(project, 't1', { 'a.txt': 'A\n' });
      // What `agents actor run --thread` records about the actor's config (openActorSandbox).
      await recordThreadConfig(threadSandboxDir(project.workspace, ACTOR, 't1'), (record) =>
        describeActorFile(join(project.workspace, 'actors'), ACTOR, record.projectDir ?? ''),
      );
      const diff = [join(ROOT, 'src', 'cli', 'main.ts'), '--workspace', project.workspace];
      const argv = [...diff, 'sandbox', 'diff', '--thread', 't1'];
      const hidden = await withHeavyHidden(argv, project.dir);
      expect(hidden.stdout).toBe('A a.txt\n');
      // The full read tolerates a config it cannot read, so the loaded modules tell the paths apart.
      const HEAVY_FILE = /\/node_modules\/(zod|yaml|@langchain|@modelcontextprotocol|ajv)\//;
      const fast = await counted(argv, project.dir);
      expect(fast.stdout).toBe(hidden.stdout);
      expect(fast.loaded.filter((url) => HEAVY_FILE.test(url))).toEqual([]);
      // Commands load on use: none of the other commands' modules (serve, login, delivery).
      const OTHER_COMMANDS =
        /\/cli\/commands\/(serve|server|server-login|sandbox-apply|actor-run)\.|\/deliver\/apply\./;
      expect(fast.loaded.filter((url) => OTHER_COMMANDS.test(url))).toEqual([]);
      // Edited: the file no longer has the recorded bytes, so the command parses and validates
      // it, with the same diff.
      await appendFile(join(project.workspace, 'actors', `${ACTOR}.yaml`), 'description: edited\n');
      const full = await counted(argv, project.dir);
      expect(full.stdout).toBe(fast.stdout);
      expect(full.loaded.some((url) => url.includes('/node_modules/zod/'))).toBe(true);
      expect(full.loaded.some((url) => url.includes('/node_modules/yaml/'))).toBe(true);
    } finally {
      await removeProject(project);
    }
  });

  it('an entry that needs LangGraph fails to import when it is hidden (the check bites)', async () => {
    await expect(withHeavyHidden(importing('src/entries/graph.ts'))).rejects.toThrow(
      // Whichever hidden package its first import reaches (zod, LangChain...).
      /Cannot find package '(zod|yaml|@langchain\/|@modelcontextprotocol\/)/,
    );
  });
});
