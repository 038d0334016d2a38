/**
 * Issue 35, item 8: what a server's own install puts back into sight. A program in `~/.cargo/bin`
 * or `~/.local/bin` gets its prefix's bin, lib, lib64 and pyvenv.cfg, never the credentials
 * beside them; a command line naming a path inside the state folder is refused.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { confinementScope } from '../../src/runtime/confinement-scope.js';
import { resolveConfinement } from '../../src/confinement/confinement.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';

const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

// Outside /tmp: in the checkout (git-ignored), removed after each test.
const OUTSIDE_TMP = join(import.meta.dirname, '..', '..', '.test-tmp');

let scratch: string;
const cleanups: string[] = [];
beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'agents-install-')));
  cleanups.push(scratch);
});
afterEach(() => {
  for (const path of cleanups.splice(0)) rmSync(path, { recursive: true, force: true });
});

it('a server in ~/.cargo/bin or ~/.local/bin runs, and cannot read the credentials beside its prefix', () => {
  if (!BUBBLEWRAP.available) {
    expect(MUST_CONFINE).toBe(false);
    return;
  }
  // A home in the checkout (outside /tmp unless the checkout is there) and one under the
  // private /tmp: there the home's tmpfs lies below /tmp's top folder, so only the prefix rule
  // puts the server's lib back.
  mkdirSync(OUTSIDE_TMP, { recursive: true });
  const homes = [realpathSync(mkdtempSync(join(OUTSIDE_TMP, 'home-'))), join(scratch, 'home')];
  cleanups.push(homes[0]!);
  const sandbox = join(scratch, 'sandbox');
  mkdirSync(sandbox);
  for (const [home, prefix] of homes.flatMap((home) =>
    ['.cargo', '.local'].map((prefix) => [home, prefix] as const),
  )) {
    const root = join(home, prefix);
    mkdirSync(join(root, 'bin'), { recursive: true });
    mkdirSync(join(root, 'lib'), { recursive: true });
    writeFileSync(join(root, 'lib', 'helper.txt'), 'library\n');
    writeFileSync(join(root, 'credentials.toml'), 'token = "secret"\n');
    const server = join(root, 'bin', 'server');
    // Reads its own lib (must work) and the credentials beside its prefix (must not).
    writeFileSync(
      server,
      '#!/bin/sh\nd=$(dirname "$0")/..\ncat "$d/lib/helper.txt"; cat "$d/credentials.toml" 2>/dev/null || echo hidden\n',
    );
    chmodSync(server, 0o755);
    // Precondition: unconfined, the credentials are read.
    expect(spawnSync(server, { encoding: 'utf8' }).stdout).toBe('library\ntoken = "secret"\n');
    // The home folder is where a package-root search stops (os.homedir() reads HOME).
    const savedHome = process.env['HOME'];
    process.env['HOME'] = home;
    let wrapped: { command: string; args: string[] };
    try {
      wrapped = resolveConfinement(
        { mode: 'required' },
        confinementScope({ sandboxRoot: sandbox }),
      ).wrap(server, [], sandbox);
    } finally {
      process.env['HOME'] = savedHome;
    }
    const inside = spawnSync(wrapped.command, wrapped.args, { encoding: 'utf8' });
    expect(inside.stdout, inside.stderr).toBe('library\nhidden\n');
  }
});

it('a server argument inside the state folder is refused, naming the fix', () => {
  if (!BUBBLEWRAP.available) {
    expect(MUST_CONFINE).toBe(false);
    return;
  }
  const state = join(scratch, 'state');
  const sandbox = join(scratch, 'sandbox');
  mkdirSync(join(state, 'oauth'), { recursive: true });
  mkdirSync(sandbox);
  writeFileSync(join(state, 'oauth', 'tokens.json'), '{"token":"secret"}');
  const confinement = resolveConfinement(
    { mode: 'required' },
    confinementScope({ sandboxRoot: sandbox, stateDir: state }),
  );
  let error: unknown;
  try {
    confinement.wrap(process.execPath, [join(state, 'oauth', 'tokens.json')], sandbox);
  } catch (caught) {
    error = caught;
  }
  expect(AgentsError.hasCode(error, 'CONFIG_INVALID')).toBe(true);
  expect((error as Error).message).toContain('inside the agents state folder');
  // A path in the server's own sandbox (inside the state folder for a run) stays allowed.
  const runSandbox = join(state, 'sandboxes', 'one');
  mkdirSync(runSandbox, { recursive: true });
  const own = resolveConfinement(
    { mode: 'required' },
    confinementScope({ sandboxRoot: runSandbox, stateDir: state }),
  ).wrap(process.execPath, [join(runSandbox, 'server.mjs')], runSandbox);
  expect(own.args.at(-1)).toBe(join(runSandbox, 'server.mjs'));
});
