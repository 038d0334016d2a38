/**
 * `agents doctor`'s Privileges, Namespaces and Sockets lines (issue 35) fail when what they
 * prove does not hold: the same probe under the command line servers got before (root keeps
 * its capabilities, the user and IPC namespaces are the host's) and with host sockets in sight.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { privilegeChecks } from '../../src/cli/commands/doctor-privileges.js';
import { confinementScope } from '../../src/runtime/confinement-scope.js';
import { resolveConfinement, type Confinement } from '../../src/confinement/confinement.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { withoutPrivilegeDrop } from '../helpers/unprivileged.js';

const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';
const IS_ROOT = process.getuid?.() === 0;

describe('agents doctor: privileges, namespaces, sockets (issue 35)', () => {
  it('OK under the confinement servers get; FAILED without the privilege drop and with /run in sight', async () => {
    if (!BUBBLEWRAP.available || !IS_ROOT) {
      expect(MUST_CONFINE && IS_ROOT).toBe(false);
      return;
    }
    const sandbox = realpathSync(mkdtempSync(join(tmpdir(), 'agents-doctor-priv-')));
    const cover = realpathSync(mkdtempSync(join(tmpdir(), 'agents-doctor-cover-')));
    const runFolder = mkdtempSync('/run/agents-test-doctor-');
    const listener = createServer();
    await new Promise<void>((resolve) => listener.listen(join(runFolder, 'bus'), resolve));
    try {
      const scope = { ...confinementScope({ sandboxRoot: sandbox }), hidden: [cover] };
      const real = resolveConfinement({ mode: 'required', network: 'none' }, scope);
      const good = privilegeChecks(real, sandbox, cover, ['/run']);
      expect(good.map((check) => [check.name, check.ok])).toEqual([
        ['Privileges', true],
        ['Namespaces', true],
        ['Sockets', true],
      ]);
      expect(good[1]!.detail).toBe('own user, pid, ipc, mnt, net');

      const weakened: Confinement = {
        ...real,
        wrap: (command, args, cwd, server) => {
          const wrapped = real.wrap(command, args, cwd, server);
          return { command: wrapped.args[3]!, args: withoutPrivilegeDrop(wrapped.args.slice(4)) };
        },
      };
      const [privileges, namespaces] = privilegeChecks(weakened, sandbox, cover, ['/run']);
      expect(privileges!.ok).toBe(false);
      expect(privileges!.detail).toMatch(/CapEff 0*[1-9a-f]/);
      expect(privileges!.detail).toContain('unmounting a covering mount SUCCEEDED');
      expect(namespaces).toMatchObject({ ok: false });
      expect(namespaces!.detail).toContain('user, ipc');

      const open = resolveConfinement(
        { mode: 'required', network: 'none' },
        { ...scope, sockets: [] },
      );
      const socketsSeen = privilegeChecks(open, sandbox, cover, ['/run'])[2]!;
      expect(socketsSeen.ok).toBe(false);
      expect(socketsSeen.detail).toContain(join(runFolder, 'bus'));
    } finally {
      listener.close();
      rmSync(runFolder, { recursive: true, force: true });
      rmSync(sandbox, { recursive: true, force: true });
      rmSync(cover, { recursive: true, force: true });
    }
  });
});
