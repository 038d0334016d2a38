/**
 * `tsx examples/mcp-client.ts URL [--call-all]` runs the `agents` binary's `mcp-client URL` (the library's own
 * adapter over streamable HTTP, with OAuth when the server asks: initialize, list tools, with
 * `--call-all` call each one with arguments built from its schema, end the session) and exits 0. The conformance suite drives
 * the same command through `scripts/conformance-client.ts`.
 *
 * Without a URL it checks itself: it serves two tools with `createMcpServer` + `serveHttp` on
 * 127.0.0.1, runs the client against them and fails unless both calls succeed.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ToolEntry } from '../src/index.js';
import { createMcpServer, createServedToolSet, serveHttp } from '../src/serving/index.js';

/** The `agents` binary from source (what `npx agents` runs once built), argv passed as is. */
const AGENTS = [
  '--import',
  // Resolved from here, not from the working folder: the example may run from any folder.
  import.meta.resolve('tsx'),
  fileURLToPath(new URL('../src/cli/main.ts', import.meta.url)),
];

/** Runs `agents ARGS`, stdout captured or shown; resolves with the exit code and the output. */
function agents(args: string[], capture: boolean): Promise<{ code: number; stdout: string }> {
  const child = spawn(process.execPath, [...AGENTS, ...args], {
    stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
  });
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

const url = process.argv[2];

if (url !== undefined) {
  process.exitCode = (await agents(['mcp-client', ...process.argv.slice(2)], false)).code;
} else {
  const verdict = (value: boolean) => ({ value, source: 'override' as const, reason: 'example' });
  const add: ToolEntry = {
    descriptor: {
      id: 'custom:add_numbers',
      name: 'add_numbers',
      originalName: 'add_numbers',
      source: 'custom',
      description: 'Adds two numbers.',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      capabilities: {
        readOnly: verdict(true),
        writes: verdict(false),
        destructive: verdict(false),
        openWorld: verdict(false),
        disagreements: [],
      },
      pathArguments: [],
      fingerprint: 'example',
    },
    async execute(args) {
      const sum = Number(args['a']) + Number(args['b']);
      return { content: [{ type: 'text', text: String(sum) }] };
    },
  };
  const toolSet = createServedToolSet({ entries: () => [add] });
  await using http = await serveHttp({ createServer: () => createMcpServer({ toolSet }) });
  const run = await agents(['--json', 'mcp-client', String(http.url), '--call-all'], true);
  toolSet.close();
  const report = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as {
    tools: string[];
    calls: Array<{ tool: string; outcome: string; message?: string }>;
  };
  const call = report.calls[0];
  if (report.tools.join() !== 'add_numbers' || call?.outcome !== 'ok' || call.message !== '2') {
    throw new Error(`mcp-client self-check failed: ${JSON.stringify(report)}`);
  }
  process.stdout.write(`mcp-client self-check ok: ${JSON.stringify(report.calls)}\n`);
}
