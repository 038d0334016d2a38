import { describe, expect, it } from 'vitest';
import type { ConfinementBackend } from '../../src/servers/confinement.js';
import {
  CONFINEMENT_BACKENDS,
  findConfinementBackend,
  noneBackend,
  runsOn,
} from '../../src/servers/confinement-backends.js';
import { bubblewrapBackend } from '../../src/servers/confinement-bubblewrap.js';

/** A backend for a platform of its own, as a Seatbelt module would add one: only its table entry. */
function platformBackend(name: string, available: boolean): ConfinementBackend {
  return {
    name,
    platforms: ['darwin'],
    confines: true,
    installHint: `install ${name}`,
    probe: () =>
      available
        ? { available: true, path: `/usr/bin/${name}` }
        : { available: false, reason: `${name} is off` },
    wrap: (path, input) => ({
      command: path,
      args: ['-p', 'profile', input.command, ...input.args],
    }),
    hides: (scope) => [...(scope.hidden ?? [])],
    doctorChecks: () => [{ name, status: available ? 'ok' : 'warn', detail: name }],
  };
}

describe('confinement backends table', () => {
  it("gives agents doctor each backend's own checks: bubblewrap names its install fix, none has none", () => {
    expect(noneBackend.doctorChecks({})).toEqual([]);
    const [check] = bubblewrapBackend.doctorChecks({ bwrapPath: '/nonexistent/bwrap' });
    expect(check).toMatchObject({ name: 'bubblewrap', status: 'warn' });
    expect(check?.fix).toBe('install it: `apt-get install bubblewrap`');
  });

  it('holds bubblewrap (Linux) and none (every platform, never confines), none last', () => {
    expect(CONFINEMENT_BACKENDS.map((backend) => backend.name)).toEqual(['bubblewrap', 'none']);
    expect(runsOn(bubblewrapBackend, 'linux')).toBe(true);
    expect(runsOn(bubblewrapBackend, 'darwin')).toBe(false);
    expect(runsOn(noneBackend, 'win32')).toBe(true);
    expect(
      noneBackend.wrap('', {
        scope: { sandboxRoot: '/s' },
        network: true,
        command: 'x',
        args: ['a'],
        cwd: undefined,
      }),
    ).toEqual({ command: 'x', args: ['a'] });
  });

  it('finds no confining backend on a platform the table has none for, and says which exist', () => {
    const found = findConfinementBackend({ network: true }, 'darwin');
    expect(found).toEqual({
      available: false,
      reason: expect.stringContaining(
        'no OS confinement backend runs on darwin yet (bubblewrap: linux)',
      ),
    });
  });

  it('picks a new platform backend from its table entry alone, and wraps through it', () => {
    const table = [bubblewrapBackend, platformBackend('seatbelt', true), noneBackend];
    const found = findConfinementBackend({ network: true }, 'darwin', table);
    expect(found.available).toBe(true);
    if (!found.available) return;
    expect(found.backend.name).toBe('seatbelt');
    expect(
      found.backend.wrap(found.path, {
        scope: { sandboxRoot: '/s' },
        network: true,
        command: 'node',
        args: ['srv.js'],
        cwd: undefined,
      }),
    ).toEqual({
      command: '/usr/bin/seatbelt',
      args: ['-p', 'profile', 'node', 'srv.js'],
    });
  });

  it('reports the first backend’s reason and install hint when none works', () => {
    const table = [platformBackend('first', false), platformBackend('second', false), noneBackend];
    expect(findConfinementBackend({ network: false }, 'darwin', table)).toEqual({
      available: false,
      reason: 'first is off',
      fix: 'install first',
    });
  });
});
