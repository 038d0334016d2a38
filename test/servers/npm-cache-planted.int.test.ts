/**
 * Issue 35, item 4: an `npx` server's private npm cache is writable inside its confinement and
 * shared by every project's server of that name. What the server plants there as the host's
 * start marker must not be followed (a symlink made the host truncate another project's file on
 * the next start, even `server test`) or block the CLI (a fifo hung it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { NPM_START_MARKER } from '../../src/confinement/npm-cache.js';
import { FAULT_SERVER, launcherFolder } from './fixture.js';
import { agentsProcess, makeProjectRepo } from '../cli/helpers.js';

const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

describe('what a server plants in its npm cache', () => {
  let dir: string;
  let xdg: string;
  let cache: string;
  let bin: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-npm-planted-');
    xdg = join(dir, '..', `${dir.split('/').pop()!}-cache`);
    cache = join(xdg, 'agents', 'npm', 'npmsrv');
    // In the checkout, so the stand-in `npx` can run the checkout's fixture: see launcherFolder.
    bin = launcherFolder('npm-planted-');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(xdg, { recursive: true, force: true });
    await rm(bin, { recursive: true, force: true });
  });

  it(
    'a symlink as the start marker is never followed and a fifo never blocks `server test`',
    { timeout: 60_000 },
    async () => {
      if (!BUBBLEWRAP.available) {
        expect(MUST_CONFINE).toBe(false);
        return;
      }
      // A stand-in `npx` that runs a real MCP server, or fails while `.fail` is in its cache.
      await mkdir(xdg, { recursive: true });
      const npx = join(bin, 'npx');
      await writeFile(
        npx,
        `#!/bin/sh\n[ -e "$npm_config_cache/.fail" ] && exit 1\nexec "${process.execPath}" "${FAULT_SERVER}" normal\n`,
        { mode: 0o755 },
      );
      const env = { XDG_CACHE_HOME: xdg };
      const cli = (...argv: string[]) => agentsProcess(dir, argv, undefined, env);
      expect((await cli('server', 'add', 'npmsrv', '--', npx, '-y', 'some-server')).code).toBe(0);

      // Precondition: the host writes its marker at exactly this path (a failed start keeps it).
      await writeFile(join(cache, '.fail'), '');
      expect((await cli('server', 'test', 'npmsrv')).code).not.toBe(0);
      expect(lstatSync(join(cache, NPM_START_MARKER)).isFile()).toBe(true);
      await rm(join(cache, '.fail'));
      await rm(join(cache, NPM_START_MARKER));

      // Another project's file, and a link to it planted as the marker.
      const victim = join(xdg, 'other-project-file.txt');
      await writeFile(victim, 'precious\n');
      await symlink(victim, join(cache, NPM_START_MARKER));
      expect(lstatSync(join(cache, NPM_START_MARKER)).isSymbolicLink()).toBe(true);
      const linked = await cli('server', 'test', 'npmsrv');
      expect([linked.code, linked.stderr]).toEqual([0, '']);
      expect(await readFile(victim, 'utf8')).toBe('precious\n');
      expect(existsSync(join(cache, NPM_START_MARKER))).toBe(false);

      // A fifo as the marker: the start neither hangs nor fails.
      execFileSync('mkfifo', [join(cache, NPM_START_MARKER)]);
      expect(lstatSync(join(cache, NPM_START_MARKER)).isFIFO()).toBe(true);
      const started = Date.now();
      const fifo = await cli('server', 'test', 'npmsrv');
      expect([fifo.code, fifo.stderr]).toEqual([0, '']);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(existsSync(join(cache, NPM_START_MARKER))).toBe(false);
    },
  );
});
