import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATE_DIR_ENV } from '../../src/servers/oauth/oauth-store.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-fixture.js';
import { agents, makeProjectRepo } from './helpers.js';

// A scope step-up during a run is for a person: the run stops (exit 5) with the login line,
// the model never sees it, and after the login `resume --continue` runs the call again.
describe('a tool call that needs an OAuth scope step-up (#26)', () => {
  let fixture: OAuthFixture;
  let dir: string;
  let stateDir: string;
  const savedStateDir = process.env[STATE_DIR_ENV];

  beforeEach(async () => {
    fixture = await startOAuthFixture();
    dir = await makeProjectRepo('agents-stepup-');
    stateDir = await mkdtemp(join(tmpdir(), 'agents-stepup-state-'));
    process.env[STATE_DIR_ENV] = stateDir;
  });
  afterEach(async () => {
    await fixture.close();
    if (savedStateDir === undefined) delete process.env[STATE_DIR_ENV];
    else process.env[STATE_DIR_ENV] = savedStateDir;
    await rm(dir, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
  });

  it(
    'pauses with AUTH_REQUIRED (exit 5), prints the login line, and --continue runs the call after the login',
    { timeout: 240_000 },
    async () => {
      expect((await agents(dir, 'server', 'add', 'notes', '--url', fixture.url.href)).code).toBe(0);
      const login = await agents(dir, 'server', 'login', 'notes', '--authorize', 'follow');
      expect(login.code, login.stderr).toBe(0);
      const store = createWorkspaceStore(join(dir, '.agents'));
      await store.put('skill', 'remote', { mcpServers: ['notes'] });
      await store.put('actor', 'writer', {
        skills: ['remote'],
        model: 'scripted:script.yaml',
        policy: { mode: 'auto' },
      });
      await writeFile(
        join(dir, 'script.yaml'),
        '- tool_calls: [{ name: write_note, args: { text: hello } }]\n- content: done\n',
      );
      const run = await agents(dir, 'actor', 'run', 'writer', '--input', 'go', '--thread', 'up1');
      expect(run.code, run.stdout + run.stderr).toBe(5);
      expect(run.stderr).toMatch(/agents server login notes --scope "[^"]*notes:write/);
      expect(run.stderr).toContain('agents actor resume writer --thread up1 --continue');
      expect(run.stdout + run.stderr).not.toContain('Please fix your mistakes');
      expect(run.stdout).not.toContain('done');

      const scope = /--scope "([^"]+)"/.exec(run.stderr)![1]!;
      const again = await agents(
        dir,
        'server',
        'login',
        'notes',
        '--authorize',
        'follow',
        '--scope',
        scope,
      );
      expect(again.code, again.stderr).toBe(0);
      const resumed = await agents(
        dir,
        'actor',
        'resume',
        'writer',
        '--thread',
        'up1',
        '--continue',
      );
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('write_note');
      expect(resumed.stdout).toContain('done');
    },
  );
});
