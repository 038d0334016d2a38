/**
 * Every git process the library starts goes through src/sandbox/git.ts, which gives it the fixed
 * config that names no program (issue 23: the host never executes anything a tool can write).
 * This fails when a module under src/ starts git some other way, and checks what the fixed
 * config does against a repo whose own config names programs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runGit, runGitBytes } from '../../src/sandbox/git.js';
import { gitEnv, gitRemoteEnv, withFixedGitConfig } from '../../src/sandbox/git-env.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const GIT_MODULE = 'sandbox/git.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(c|m)?[jt]s$/.test(entry.name) ? [path] : [];
  });
}

/** A process-starting call whose command is the literal `git`. */
const SPAWNS_GIT =
  /\b(?:execFile|execFileSync|spawn|spawnSync|exec|execSync|fork)\s*\(\s*['"`](?:[^'"`]*\/)?git['"`]/;
/** simple-git, imported statically or dynamically. */
const USES_SIMPLE_GIT = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]simple-git['"]/;
/** child_process, imported in any form. */
const USES_CHILD_PROCESS = /['"](?:node:)?child_process['"]/;

/** The reasons a module breaks the rule (empty when it keeps it). */
function violations(text: string): string[] {
  const found: string[] = [];
  if (SPAWNS_GIT.test(text)) found.push('starts git directly');
  if (USES_SIMPLE_GIT.test(text)) found.push('uses simple-git');
  // A process module plus a `'git'` literal: git started through a variable.
  if (USES_CHILD_PROCESS.test(text) && /['"`]git['"`]/.test(text))
    found.push("spawns 'git' indirectly");
  return found;
}

describe('every git spawn goes through src/sandbox/git.ts', () => {
  it('the check itself recognises the ways of starting git', () => {
    expect(violations(`execFile('git', ['status'])`)).toEqual(['starts git directly']);
    expect(violations(`spawn(\n  "/usr/bin/git",\n  args)`)).toEqual(['starts git directly']);
    expect(violations(`const { simpleGit } = await import('simple-git');`)).toEqual([
      'uses simple-git',
    ]);
    expect(violations(`import { spawn } from 'node:child_process';\nconst c = 'git';`)).toEqual([
      "spawns 'git' indirectly",
    ]);
    expect(violations(`spawn(this.options.command, args)`)).toEqual([]);
  });

  it('no module under src/ other than sandbox/git.ts starts git', () => {
    const offenders = sourceFiles(SRC)
      .map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }))
      .filter(({ path }) => path !== GIT_MODULE)
      .flatMap(({ path, text }) => violations(text).map((why) => `${path}: ${why}`));
    expect(offenders).toEqual([]);
  });

  it('git.ts starts git in one place, with the fixed config on every path', () => {
    const text = readFileSync(join(SRC, GIT_MODULE), 'utf8');
    expect(text.match(/execFile\(\s*'git'/g)).toHaveLength(1);
    // The execFile call takes its environment through withFixedGitConfig.
    expect(text).toMatch(/env: withFixedGitConfig\(options\.env \?\? gitEnv\(\)\)/);
    expect(text).not.toMatch(USES_SIMPLE_GIT);
  });
});

describe('the fixed git config', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'git-fixed-config-'));
  const repo = join(scratch, 'repo');
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  execFileSync('git', ['init', '-q', repo]);
  // A repository whose own config (the tool's to write) names programs everywhere.
  for (const [key, value] of [
    ['core.fsmonitor', '/tmp/evil'],
    ['core.hooksPath', '/tmp/evil-hooks'],
    ['core.sshCommand', '/tmp/evil'],
    ['core.pager', '/tmp/evil'],
    ['core.editor', '/tmp/evil'],
    ['sequence.editor', '/tmp/evil'],
    ['gpg.program', '/tmp/evil'],
    ['commit.gpgSign', 'true'],
    ['credential.helper', '/tmp/evil'],
    ['submodule.recurse', 'true'],
    ['protocol.allow', 'always'],
    ['protocol.ext.allow', 'always'],
    ['core.attributesFile', '/tmp/evil-attributes'],
  ])
    execFileSync('git', ['-C', repo, 'config', key!, value!]);

  /** The value git uses (the last one), or with `all` every value in order. */
  const read = async (key: string, env?: Record<string, string>, all = false) => {
    const { stdout } = await runGit(['config', all ? '--get-all' : '--get', key], {
      cwd: repo,
      ...(env === undefined ? {} : { env }),
      okExitCodes: [1],
    });
    return all ? stdout.replace(/\n$/, '') : stdout.trim();
  };

  it("overrides every program-naming key of the repo's own config", async () => {
    expect(await read('core.fsmonitor')).toBe('false');
    expect(await read('core.hooksPath')).toBe('/dev/null');
    expect(await read('core.sshCommand')).toBe('false');
    expect(await read('core.pager')).toBe('cat');
    expect(await read('core.editor')).toBe('false');
    expect(await read('sequence.editor')).toBe('false');
    expect(await read('gpg.program')).toBe('false');
    expect(await read('commit.gpgSign')).toBe('false');
    expect(await read('submodule.recurse')).toBe('false');
    expect(await read('protocol.allow')).toBe('never');
    expect(await read('protocol.ext.allow')).toBe('never');
    expect(await read('core.attributesFile')).toBe('/dev/null');
    // An empty value resets the helper list: the repo's helper is listed before it, and git
    // runs only those after the last empty entry.
    expect((await read('credential.helper', undefined, true)).split('\n')).toEqual([
      '/tmp/evil',
      '',
    ]);
  });

  it('applies to an environment built by hand, and to the byte runner', async () => {
    expect(await read('core.fsmonitor', { PATH: process.env['PATH'] ?? '/usr/bin:/bin' })).toBe(
      'false',
    );
    const bytes = await runGitBytes(['config', '--get', 'core.hooksPath'], { cwd: repo });
    expect(bytes.stdout.toString('utf8').trim()).toBe('/dev/null');
  });

  it('lets a child git inherit it (what a nested repo status would read)', async () => {
    // `git -C repo config` run by a git alias is a child git: GIT_CONFIG_COUNT reaches it.
    const { stdout } = await runGit(
      ['-c', `alias.child=!git -C ${repo} config --get core.fsmonitor`, 'child'],
      { cwd: scratch },
    );
    expect(stdout.trim()).toBe('false');
  });

  it('keeps transports for the shared store only, never ext::', async () => {
    expect(await read('protocol.allow', gitRemoteEnv())).toBe('always');
    expect(await read('protocol.ext.allow', gitRemoteEnv())).toBe('never');
    expect(await read('core.fsmonitor', gitRemoteEnv())).toBe('false');
    expect(withFixedGitConfig(gitRemoteEnv())['GIT_CONFIG_COUNT']).toBe(
      gitRemoteEnv()['GIT_CONFIG_COUNT'],
    );
    expect(gitEnv()['GIT_CONFIG_COUNT']).not.toBe(gitRemoteEnv()['GIT_CONFIG_COUNT']);
  });
});
