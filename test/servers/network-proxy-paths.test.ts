/**
 * Issue 35, item 8: the proxy's socket folder. A socket path over 107 bytes (the kernel would cut
 * it short: a dead proxy with no error) and a missing temp folder are typed errors naming the
 * fix.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { compileHostRules } from '../../src/servers/network/host-rules.js';
import { MAX_SOCKET_PATH_BYTES, startNetworkProxy } from '../../src/servers/network/proxy.js';

const saved = process.env['TMPDIR'];
afterEach(() => {
  if (saved === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = saved;
});

const rules = compileHostRules({ allow: ['example.test'], deny: [] });

it('a socket path over 107 bytes is refused with the fix, not truncated', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'agents-long-')));
  try {
    const deep = join(base, 'x'.repeat(60), 'y'.repeat(40));
    mkdirSync(deep, { recursive: true });
    process.env['TMPDIR'] = deep;
    const proxy = startNetworkProxy();
    try {
      let error: unknown;
      await proxy.listen('svc', rules).catch((caught: unknown) => (error = caught));
      expect(AgentsError.hasCode(error, 'CONFINEMENT_UNAVAILABLE')).toBe(true);
      expect((error as Error).message).toContain(`over the ${MAX_SOCKET_PATH_BYTES}`);
      expect((error as Error).message).toContain('TMPDIR=/tmp');
      expect(proxy.socketOf('svc')).toBeUndefined();
    } finally {
      await proxy.close();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

it('a missing temp folder is a typed error naming it and the fix', () => {
  const missing = join(tmpdir(), 'agents-no-such-temp-folder', 'gone');
  process.env['TMPDIR'] = missing;
  let error: unknown;
  try {
    startNetworkProxy();
  } catch (caught) {
    error = caught;
  }
  expect(AgentsError.hasCode(error, 'CONFINEMENT_UNAVAILABLE')).toBe(true);
  expect((error as Error).message).toContain(missing);
  expect((error as Error).message).toContain(`mkdir -p ${missing}`);
});
