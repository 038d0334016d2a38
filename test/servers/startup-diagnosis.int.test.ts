import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import { STRAY_OUTPUT_GRACE_MS } from '../../src/servers/startup-diagnosis.js';
import { FAST_TIMEOUTS, faultServerConfig, groupGone } from './fixture.js';

const USAGE_EXIT = fileURLToPath(new URL('../fixtures/usage-exit.sh', import.meta.url));

const open: ManagedServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

async function startFailure(server: ManagedServer): Promise<ServerError> {
  open.push(server);
  const error: unknown = await server.start().then(
    () => new Error('expected the start to fail'),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ServerError);
  return error as ServerError;
}

describe('start failures name the cause, not its symptom', () => {
  it('a server that prints usage and exits 64 before reading is reported with its exit code and stderr, never "write EPIPE"', async () => {
    // The child usually exits before our initialize write, which then fails with EPIPE; the
    // report must wait for the exit status. Several rounds, since the race goes either way.
    for (let round = 0; round < 5; round++) {
      const error = await startFailure(
        createManagedServer({
          name: 'needs-root',
          transport: 'stdio',
          command: USAGE_EXIT,
          args: [],
          trusted: false,
          timeouts: FAST_TIMEOUTS,
          restart: { enabled: false, maxAttempts: 0, initialDelayMs: 0, maxDelayMs: 0 },
        }),
      );
      expect(error.code).toBe(AgentsErrorCode.ServerStartFailed);
      expect(error.message).not.toContain('EPIPE');
      expect(error.message).toContain('exited with code 64 during initialize');
      expect(error.message).toContain('error: missing ROOT_DIR');
      expect(error.details).toMatchObject({ exitCode: 64, phase: 'initialize' });
    }
  });

  it('a program that writes non-protocol text on stdout fails fast, quoting it, instead of timing out as a slow start', async () => {
    const started = Date.now();
    const server = createManagedServer(
      faultServerConfig('chatty', 'stdout-chatter', { timeouts: { startupMs: 30_000 } }),
    );
    const error = await startFailure(server);
    const elapsed = Date.now() - started;
    expect(error.code).toBe(AgentsErrorCode.ProtocolError);
    expect(error.message).toContain('printed text on stdout that is not MCP');
    expect(error.message).toContain('Welcome to tool-cli 2.1!');
    expect(error.message).not.toContain('startupMs');
    // Far from the 30 s startup timeout it used to wait out (bound generous for a loaded CI).
    expect(elapsed).toBeGreaterThanOrEqual(STRAY_OUTPUT_GRACE_MS);
    expect(elapsed).toBeLessThan(15_000);
    // Nothing of the chatty program is left running.
    const pid = error.details['pid'];
    expect(typeof pid).toBe('number');
    expect(groupGone(pid as number)).toBe(true);
  });

  it('a banner before the handshake is still fine', async () => {
    const server = createManagedServer(faultServerConfig('banner', 'banner'));
    open.push(server);
    await server.start();
    expect(server.status).toBe('ready');
  });
});
