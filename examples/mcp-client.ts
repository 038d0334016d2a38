/**
 * `tsx examples/mcp-client.ts URL` runs `agents mcp-client URL` (the library's own adapter over
 * streamable HTTP, with OAuth when the server asks: initialize, list tools, call each one with
 * arguments built from its schema, end the session) and exits 0. The conformance suite drives
 * the same command through `scripts/conformance-client.ts`.
 *
 * Without a URL it checks itself: it serves two tools with `createMcpServer` + `serveHttp` on
 * 127.0.0.1, runs the client against them and fails unless both calls succeed.
 */
import { mcpClientCommand, runMcpClient } from '../src/cli/commands/mcp-client.js';
import type { ToolEntry } from '../src/core/tool-descriptor.js';
import { serveHttp } from '../src/serve/http.js';
import { createMcpServer } from '../src/serve/mcp-server.js';
import { createServedToolSet } from '../src/serve/served-tool-set.js';

const url = process.argv[2];

if (url !== undefined) {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  try {
    process.exitCode = await mcpClientCommand.run({
      argv: process.argv.slice(2),
      workspace: '.agents',
      cwd: process.cwd(),
      projectDir: process.cwd(),
      json: false,
      stdout: process.stdout,
      stderr: process.stderr,
      stdin: process.stdin,
      signal: controller.signal,
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
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
  const report = await runMcpClient(http.url);
  toolSet.close();
  const call = report.calls[0];
  if (report.tools.join() !== 'add_numbers' || call?.outcome !== 'ok' || call.message !== '2') {
    throw new Error(`mcp-client self-check failed: ${JSON.stringify(report)}`);
  }
  process.stdout.write(`mcp-client self-check ok: ${JSON.stringify(report.calls)}\n`);
}
