import { describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import type { ManagedServer } from '../../src/servers/managed-server.js';
import { createServerManager } from '../../src/servers/server-manager.js';

/** A managed server stand-in whose start the test settles by hand. */
function deferredServer(config: NamedServerConfig): {
  server: ManagedServer;
  finishStart: () => void;
  closed: () => boolean;
} {
  let finishStart!: () => void;
  const started = new Promise<void>((resolve) => {
    finishStart = resolve;
  });
  let closeCount = 0;
  const partial = {
    name: config.name,
    status: 'starting',
    start: () => started,
    close: () => {
      closeCount += 1;
      return Promise.resolve();
    },
    on: () => () => undefined,
  };
  return {
    server: partial as unknown as ManagedServer,
    finishStart,
    closed: () => closeCount > 0,
  };
}

describe('server manager (in process)', () => {
  it('an acquire that was waiting when close() ran fails with CLOSED instead of crashing', async () => {
    const config: NamedServerConfig = {
      name: 'late',
      transport: 'stdio',
      command: 'unused',
    } as NamedServerConfig;
    const fake = deferredServer(config);
    const manager = createServerManager({ createServer: () => fake.server });
    const acquiring = manager.acquire([config]);
    // The start succeeds, and in the same tick the manager is closed.
    fake.finishStart();
    const closing = manager.close();
    const error = await acquiring.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    await closing;
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe(AgentsErrorCode.Closed);
    expect((error as ServerError).message).toMatch(/closed while server "late" was starting/);
    expect(fake.closed()).toBe(true);
  });
});
