/**
 * Issue 29, "load only what is used": importing the `/adapter` entry or the package root, and
 * starting `agents --help`, must not load zod, yaml, either MCP SDK, LangChain or LangGraph.
 * Each runs in a child process where those packages fail to resolve as if not installed
 * (test/fixtures/hide-packages.mjs), so an eager import of any of them, anywhere on the import
 * path, fails here; the last case shows the hiding bites. (`bench/cli-startup.ts` times them.)
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const HIDE = join(ROOT, 'test', 'fixtures', 'hide-packages.mjs');
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

function withHeavyHidden(args: string[]) {
  return run(process.execPath, ['--import', 'tsx', '--import', HIDE, ...args], {
    cwd: ROOT,
    env: { ...process.env, AGENTS_HIDE_PACKAGES: HEAVY, NO_COLOR: '1' },
  });
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

  it('an entry that needs LangGraph fails to import when it is hidden (the check bites)', async () => {
    await expect(withHeavyHidden(importing('src/entries/graph.ts'))).rejects.toThrow(
      // Whichever hidden package its first import reaches (zod, LangChain...).
      /Cannot find package '(zod|yaml|@langchain\/|@modelcontextprotocol\/)/,
    );
  });
});
