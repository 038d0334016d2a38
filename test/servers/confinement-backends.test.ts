import { describe, expect, it } from 'vitest';
import type { ConfinementBackend } from '../../src/confinement/backend.js';
import {
  allConfinementBackends,
  findConfinementBackend,
  runsOn,
} from '../../src/confinement/backends.js';
import { bubblewrapBackend } from '../../src/confinement/bubblewrap.js';
import { ConfinementBackendSettingsSchema } from '../../src/confinement/settings.js';

/** A backend for a platform of its own, as a Seatbelt module would add one: only its table entry. */
function platformBackend(type: string, available: boolean): ConfinementBackend {
  return {
    type,
    platforms: ['darwin'],
    installHint: `install ${type}`,
    guarantees: {
      network: ['none', 'open'],
      networkNoneIsTotal: true,
      processesIsolated: false,
      hiddenReadsEmpty: false,
      sandboxAtProjectPath: false,
      privilegesDropped: true,
      privateTmp: false,
      hostSocketsUnreachable: true,
    },
    probe: () =>
      available
        ? { available: true, path: `/usr/bin/${type}` }
        : { available: false, reason: `${type} is off` },
    launch: (path, request) => ({
      command: path,
      args: ['-p', 'profile', request.command, ...request.args],
    }),
  };
}

describe('confinement backends table', () => {
  it("gives agents doctor each backend's own checks: bubblewrap names its install fix", () => {
    const [check] = bubblewrapBackend.doctorChecks!({
      type: 'bubblewrap',
      path: '/nonexistent/bwrap',
    });
    expect(check).toMatchObject({ name: 'bubblewrap', status: 'warn' });
    expect(check?.fix).toBe('install it: `apt-get install bubblewrap`');
  });

  it('holds bubblewrap (Linux); the config schema follows the table and refuses unknown keys', () => {
    expect(allConfinementBackends().map((backend) => backend.type)).toContain('bubblewrap');
    expect(runsOn(bubblewrapBackend, 'linux')).toBe(true);
    expect(runsOn(bubblewrapBackend, 'darwin')).toBe(false);
    expect(
      ConfinementBackendSettingsSchema.safeParse({ type: 'bubblewrap', path: 'bwrap' }).success,
    ).toBe(true);
    expect(
      ConfinementBackendSettingsSchema.safeParse({ type: 'bubblewrap', bwrapPath: 'x' }).success,
    ).toBe(false);
    expect(ConfinementBackendSettingsSchema.safeParse({ type: 'nope' }).success).toBe(false);
  });

  it('finds no confining backend on a platform the table has none for, and says which exist', () => {
    const found = findConfinementBackend({ network: 'open' }, 'darwin', [bubblewrapBackend]);
    expect(found).toEqual({
      available: false,
      reason: expect.stringContaining(
        'no OS confinement backend runs on darwin yet (bubblewrap: linux)',
      ),
    });
  });

  it('picks a new platform backend from its table entry alone, and launches through it', () => {
    const table = [bubblewrapBackend, platformBackend('seatbelt', true)];
    const found = findConfinementBackend({ network: 'open' }, 'darwin', table);
    expect(found.available).toBe(true);
    if (!found.available) return;
    expect(found.backend.type).toBe('seatbelt');
    expect(
      found.backend.launch(found.path, {
        scope: { sandboxRoot: '/s' },
        network: 'open',
        command: 'node',
        args: ['srv.js'],
        cwd: undefined,
      }),
    ).toEqual({
      command: '/usr/bin/seatbelt',
      args: ['-p', 'profile', 'node', 'srv.js'],
    });
  });

  it('skips a backend that cannot give the network asked for, and names why', () => {
    const table = [platformBackend('seatbelt', true)];
    expect(findConfinementBackend({ network: 'proxy' }, 'darwin', table)).toMatchObject({
      available: false,
      reason: expect.stringContaining('seatbelt cannot give a server network "proxy"'),
    });
  });

  it('uses only the backend the settings name, and refuses a name the table lacks', () => {
    const table = [platformBackend('first', true), platformBackend('second', true)];
    const found = findConfinementBackend(
      { network: 'open', backend: { type: 'second' } },
      'darwin',
      table,
    );
    expect(found.available && found.backend.type).toBe('second');
    expect(
      findConfinementBackend({ network: 'open', backend: { type: 'third' } }, 'darwin', table),
    ).toMatchObject({
      available: false,
      reason: expect.stringContaining('"third", which does not exist'),
    });
  });

  it('reports the first backend’s reason and install hint when none works', () => {
    const table = [platformBackend('first', false), platformBackend('second', false)];
    expect(findConfinementBackend({ network: 'none' }, 'darwin', table)).toEqual({
      available: false,
      reason: 'first is off',
      fix: 'install first',
    });
  });
});
