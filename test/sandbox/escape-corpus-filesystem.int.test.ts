import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StdioServerConfigSchema } from '../../src/config/server-schema.js';
import { createPathRewriteMiddleware } from '../../src/pipeline/path-rewrite.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';
import { detectPathArguments } from '../../src/mcp/path-arguments.js';
import { createPathMap } from '../../src/sandbox/path-map.js';
import { resolveConfinement } from '../../src/confinement/confinement.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createServerTransport, type ServerTransport } from '../../src/servers/connect.js';
import { hostileCorpus, makeEscapeLayout, type EscapeLayout } from './escape-corpus.js';
import { hashTree } from './helpers.js';

const require = createRequire(import.meta.url);
const serverEntry = join(
  dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist/index.js',
);
const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

let layout: EscapeLayout;
let client: Client;
let transport: ServerTransport;
let tools: Map<string, Tool>;

beforeAll(async () => {
  layout = makeEscapeLayout('escape-fs-');
  // The real server, allowed only the sandbox root, confined where bubblewrap works here.
  const confinement = resolveConfinement(
    { mode: 'auto' },
    { sandboxRoot: layout.root, projectDir: layout.repo },
  );
  transport = createServerTransport(
    {
      ...StdioServerConfigSchema.parse({
        transport: 'stdio',
        command: process.execPath,
        args: [serverEntry, layout.root],
      }),
      name: 'fs',
    },
    { cwd: layout.root, confinement, runDir: null },
  );
  client = new Client({ name: 'escape-corpus', version: '1.0.0' });
  await client.connect(transport.transport);
  tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await transport?.close();
  rmSync(layout.scratch, { recursive: true, force: true });
});

function descriptor(name: string): ToolDescriptor {
  const tool = tools.get(name)!;
  const write = { value: true, source: 'default' as const, reason: 'test' };
  const no = { value: false, source: 'default' as const, reason: 'test' };
  return {
    id: `mcp:fs/${name}`,
    name,
    originalName: name,
    source: 'mcp',
    description: '',
    inputSchema: tool.inputSchema,
    capabilities: {
      readOnly: no,
      writes: write,
      destructive: no,
      openWorld: no,
      disagreements: [],
    },
    pathArguments: detectPathArguments(tool.inputSchema),
    fingerprint: name,
  };
}

function outsideState(): string[] {
  const { scratch, repo, outside } = layout;
  return [
    hashTree(outside),
    hashTree(join(repo, '.git')),
    hashTree(join(scratch, 'run-10')),
    hashTree(join(scratch, 'run-1_evil')),
    hashTree(join(scratch, 'repo-backup')),
  ];
}

describe('the escape corpus through the real @modelcontextprotocol/server-filesystem', () => {
  it(
    'path rewriting refuses every entry before the server sees it; nothing outside changes',
    { timeout: 300_000 },
    async () => {
      const corpus = hostileCorpus(layout);
      const before = outsideState();
      const reached: string[] = [];
      const handler = composeMiddleware(
        [createPathRewriteMiddleware(createPathMap(layout.root, { aliases: [layout.repo] }))],
        async (request) => {
          reached.push(String(request.args['path'] ?? request.args['destination']));
          return (await client.callTool({
            name: request.descriptor.originalName,
            arguments: request.args,
          })) as CallToolResult;
        },
      );
      const notRefused: string[] = [];
      for (const path of corpus) {
        const written = await handler({
          descriptor: descriptor('write_file'),
          args: { path, content: 'pwned' },
          context: {},
        });
        const moved = await handler({
          descriptor: descriptor('move_file'),
          args: { source: 'src/a.ts', destination: path },
          context: {},
        });
        if (written.isError !== true || moved.isError !== true) notRefused.push(path);
      }
      expect(notRefused).toEqual([]);
      expect(reached).toEqual([]);
      expect(outsideState()).toEqual(before);
      expect(existsSync(join(layout.outside, 'pwned'))).toBe(false);
    },
  );

  it(
    'without path rewriting, the confined server still cannot change anything outside the sandbox',
    { timeout: 300_000 },
    async () => {
      if (!BUBBLEWRAP.available) {
        expect(MUST_CONFINE).toBe(false);
        return;
      }
      const before = outsideState();
      let accepted = 0;
      for (const path of hostileCorpus(layout)) {
        // Raw arguments straight to the server: only its own checks and the OS stand between.
        const result = (await client.callTool({
          name: 'write_file',
          arguments: { path, content: 'pwned' },
        })) as CallToolResult;
        if (result.isError !== true) accepted++;
      }
      expect(outsideState()).toEqual(before);
      expect(existsSync(join(layout.outside, 'pwned'))).toBe(false);
      // Some entries are legal names inside the root for the server (e.g. "~/x" is a folder
      // named "~"): they land in the sandbox, which is allowed. Most are refused.
      expect(accepted).toBeLessThan(hostileCorpus(layout).length / 2);
    },
  );
});
