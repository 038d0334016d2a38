import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const mainScript = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const fixtureServer = fileURLToPath(new URL('../fixtures/fixture-server.ts', import.meta.url));
const tsxLoader = import.meta.resolve('tsx');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Command lines of live processes that mention `marker`. */
function processesWith(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

describe('agents serve (the real CLI)', () => {
  it("serves a skill's tools over stdio and stops its upstream server on stdin EOF", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'serve-cli-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const workspace = join(dir, '.agents');
    await mkdir(join(workspace, 'skills'), { recursive: true });
    // The upstream gets `--cwd <dir>`: a marker to find its process by, and a place for files.
    const skill = [
      'description: Files from the fixture server',
      'mcp_servers:',
      '  - name: fixture',
      '    transport: stdio',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: ${JSON.stringify(['--import', tsxLoader, fixtureServer, '--transport', 'stdio', '--tools', 'basic', '--cwd', dir])}`,
      '',
    ].join('\n');
    await writeFile(join(workspace, 'skills', 'files.yaml'), skill);

    const child = spawn(
      process.execPath,
      ['--import', tsxLoader, mainScript, '--workspace', workspace, 'serve', '--skill', 'files'],
      { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    cleanups.push(async () => {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    });

    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new StdioServerTransport(child.stdout, child.stdin));
    expect(client.getServerVersion()?.name).toBe('agents-skill-files');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['echo', 'write_file', 'read_file']),
    );
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(result.content).toEqual([{ type: 'text', text: '5' }]);
    expect(processesWith(dir).some((line) => line.includes('fixture-server'))).toBe(true);

    child.stdin.end();
    expect(await exited, stderr).toBe(0);
    await expect
      .poll(() => processesWith(dir).filter((line) => line.includes('fixture-server')), {
        timeout: 10_000,
      })
      .toEqual([]);
    await client.close();
  }, 120_000);
});
