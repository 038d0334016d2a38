import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPathRewriteMiddleware } from '../../src/pipeline/path-rewrite.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import { createPathMap } from '../../src/sandbox/path-map.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import { startFixtureProcess, type FixtureProcess } from '../fixtures/fixture-process.js';
import { FAST_TIMEOUTS, resultText } from './fixture.js';

let fixture: FixtureProcess;
let scratch: string;
const servers: ManagedServer[] = [];

beforeAll(async () => {
  fixture = await startFixtureProcess('http');
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'remote-paths-')));
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await fixture?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function remote(rewritePaths?: boolean): Promise<ManagedServer> {
  const server = createManagedServer({
    name: 'remote',
    transport: 'streamable-http',
    url: fixture.url.href,
    trusted: false,
    timeouts: FAST_TIMEOUTS,
    ...(rewritePaths === undefined ? {} : { rewritePaths }),
  });
  servers.push(server);
  await server.start();
  return server;
}

describe('path rewriting for remote servers', () => {
  it('is off by default: a remote server’s paths reach it as written, never refused', async () => {
    const server = await remote();
    const readFile = server
      .entries()
      .find((entry) => entry.descriptor.originalName === 'read_file')!;
    expect(readFile.descriptor.pathArguments).toEqual([]);
    // The remote disk's own path (here the fixture runs on this machine, so it exists).
    const remoteFile = join(scratch, 'remote-side.txt');
    writeFileSync(remoteFile, 'from the remote disk');
    const sandbox = join(scratch, 'sandbox');
    mkdirSync(sandbox);
    const handler = composeMiddleware(
      [createPathRewriteMiddleware(createPathMap(sandbox))],
      (request) => readFile.execute(request.args, {}),
    );
    const result = await handler({
      descriptor: readFile.descriptor,
      args: { path: remoteFile },
      context: {},
    });
    expect(result.isError).toBeFalsy();
    expect(resultText(result)).toBe('from the remote disk');
  });

  it('is on when the server config says rewritePaths: true', async () => {
    const server = await remote(true);
    const readFile = server
      .entries()
      .find((entry) => entry.descriptor.originalName === 'read_file')!;
    expect(readFile.descriptor.pathArguments).toEqual(['path']);
  });
});
