import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { TSX_LOADER, fixtureStdioArgs } from '../fixtures/fixture-process.js';
import { runInPty } from '../helpers/pty.js';
import { makeProjectRepo } from './helpers.js';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');
const agentsArgv = (...argv: string[]) => [process.execPath, '--import', TSX_LOADER, MAIN, ...argv];

/** Every `lock` file under a folder (run locks of thread sandboxes). */
async function lockFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && entry.name === 'lock')
    .map((entry) => join(entry.parentPath, entry.name));
}

// `agents` on a real pseudo-terminal (util-linux `script`): what an interactive user sees.
describe('agents on a terminal', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-tty-');
    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'fs', {
      transport: 'stdio',
      command: process.execPath,
      args: fixtureStdioArgs(['--tools', 'basic']),
      overrides: { write_file: { pathArguments: ['path'] } },
    });
    await store.put('skill', 'files', { mcp_servers: ['fs'] });
    await writeFile(
      join(dir, 'script.yaml'),
      '- tool_calls: [{ name: write_file, args: { path: a.txt, content: first } }]\n- content: done\n',
    );
    await store.put('actor', 'careful', { skills: ['files'], model: 'scripted:script.yaml' });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'Ctrl-C at the approval prompt exits 130 without a stack trace, says how to resume and releases the thread lock',
    { timeout: 120_000 },
    async () => {
      let pressed = false;
      const run = await runInPty(
        agentsArgv('actor', 'run', 'careful', '--input', 'go', '--thread', 't1'),
        {
          cwd: dir,
          onOutput: (output, type) => {
            if (pressed || !output.includes('[a]pprove')) return;
            pressed = true;
            type('\u0003');
          },
        },
      );
      expect(pressed).toBe(true);
      expect(run.output).not.toMatch(/\n\s+at /);
      expect(run.output).not.toContain('Error: Interrupted');
      expect(run.output).toContain('agents actor resume careful --thread t1 --approve');
      expect(run.code).toBe(130);
      expect(await lockFiles(join(dir, '.agents', 'sandboxes'))).toEqual([]);
    },
  );
});
