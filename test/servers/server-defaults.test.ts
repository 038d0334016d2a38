import { describe, expect, it } from 'vitest';
import {
  ServerConfigSchema,
  ServerRestartPolicySchema,
  ServerTimeoutsSchema,
  resolveServerRestartPolicy,
  resolveServerTimeouts,
} from '../../src/config/server-schema.js';

describe('server defaults come from the config schema only', () => {
  it('resolves a config built in code to the same timeouts as a parsed file', () => {
    const parsed = ServerConfigSchema.parse({
      transport: 'stdio',
      command: 'node',
      timeouts: { callMs: 1_234 },
    });
    expect(parsed.timeouts).toEqual(ServerTimeoutsSchema.parse({ callMs: 1_234 }));
    expect(resolveServerTimeouts({ callMs: 1_234 })).toEqual(parsed.timeouts);
    expect(resolveServerTimeouts(undefined)).toEqual({
      startupMs: 30_000,
      callMs: 60_000,
      maxCallMs: 600_000,
      resetOnProgress: false,
      pingMs: 5_000,
      healthCheckIntervalMs: 0,
      shutdownMs: 2_000,
    });
  });

  it('fills what a file leaves out, and keeps what it sets', () => {
    const bare = ServerConfigSchema.parse({ transport: 'stdio', command: 'node' });
    expect(bare.timeouts).toBeUndefined();
    expect(resolveServerTimeouts(bare.timeouts)).toEqual(ServerTimeoutsSchema.parse({}));
    expect(resolveServerTimeouts({ pingMs: 7, shutdownMs: undefined })).toMatchObject({
      pingMs: 7,
      shutdownMs: 2_000,
    });
    expect(resolveServerRestartPolicy({ maxAttempts: 0 })).toEqual({
      ...ServerRestartPolicySchema.parse({}),
      maxAttempts: 0,
    });
  });
});
