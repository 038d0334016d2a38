import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import { main } from '../../src/cli/main.js';
import { STATE_DIR_ENV } from '../../src/servers/oauth/oauth-store.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-fixture.js';
import { agents, makeProjectRepo } from './helpers.js';

describe('agents server add + login against an OAuth-protected streamable HTTP server', () => {
  let fixture: OAuthFixture;
  let dir: string;
  let stateDir: string;
  let sandboxBase: string;
  const savedStateDir = process.env[STATE_DIR_ENV];

  beforeEach(async () => {
    fixture = await startOAuthFixture();
    dir = await makeProjectRepo('agents-login-');
    stateDir = await mkdtemp(join(tmpdir(), 'agents-login-state-'));
    sandboxBase = await mkdtemp(join(tmpdir(), 'agents-login-sandboxes-'));
    process.env[STATE_DIR_ENV] = stateDir;
  });
  afterEach(async () => {
    await fixture.close();
    if (savedStateDir === undefined) delete process.env[STATE_DIR_ENV];
    else process.env[STATE_DIR_ENV] = savedStateDir;
    await rm(dir, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
    await rm(sandboxBase, { recursive: true, force: true });
  });

  it('registers the server, logs in, then the CLI and a graph use it without asking again', async () => {
    const added = await agents(dir, 'server', 'add', 'notes', '--url', fixture.url.href);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('run `agents server login notes`');
    const yaml = await readFile(join(dir, '.agents', 'servers', 'notes.yaml'), 'utf8');
    expect(yaml).toContain(fixture.url.href);

    // Before the login, a run says exactly what to do.
    const before = await agents(dir, 'server', 'test', 'notes');
    expect(before.code).toBe(5);
    expect(before.stderr).toContain('run `agents server login notes`');

    const login = await agents(dir, 'server', 'login', 'notes', '--authorize', 'follow');
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toMatch(
      /^Logged in to server "notes" \(scope: mcp\); it answered with 2 tools/,
    );
    // Tokens live in the per-user state folder, never in the project's .agents/.
    expect(await readdir(join(stateDir, 'oauth'))).toHaveLength(1);
    const workspaceFiles = await readdir(join(dir, '.agents'), { recursive: true });
    for (const file of workspaceFiles) {
      const path = join(dir, '.agents', file);
      const text = await readFile(path, 'utf8').catch(() => '');
      expect(text).not.toMatch(/access_token|refresh_token/);
    }

    const tested = await agents(dir, 'server', 'test', 'notes');
    expect(tested.code).toBe(0);
    expect(tested.stdout).toContain('whoami');

    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('skill', 'remote', { mcpServers: ['notes'] });
    await store.put('actor', 'asker', {
      skills: ['remote'],
      model: 'scripted:script.yaml',
      policy: { mode: 'auto' },
      checkpointer: { type: 'memory' },
    });
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      join(dir, 'script.yaml'),
      '- tool_calls: [{ name: whoami }]\n- content: done\n',
    );
    await using actor = await createActor({
      name: 'asker',
      workspace: store,
      sandboxBaseDir: sandboxBase,
    });
    await actor.activate();
    const texts: string[] = [];
    for await (const event of actor.run('who am I?')) {
      if (event.type === 'tool-call-end') texts.push(`${event.isError}:${event.text}`);
    }
    const clientId = fixture.stats.registrations[0]?.client_id ?? 'none';
    expect(texts).toEqual([`false:${clientId} mcp`]);
    // One person-facing login in all: the CLI test and the graph used the stored tokens.
    expect(fixture.stats.authorizations).toHaveLength(1);

    const logout = await agents(dir, 'server', 'logout', 'notes');
    expect(logout.code).toBe(0);
    expect(await readdir(join(stateDir, 'oauth'))).toEqual([]);
  });

  it('on a headless machine: says it is waiting, refuses a wrong paste, takes the pasted redirect address', async () => {
    expect((await agents(dir, 'server', 'add', 'notes', '--url', fixture.url.href)).code).toBe(0);
    const stdin = new PassThrough();
    let stderr = '';
    let pasted = false;
    const stderrSink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        stderr += chunk.toString();
        const url = /^ {2}(http\S+)$/m.exec(stderr)?.[1];
        if (url !== undefined && !pasted && stderr.includes('paste that whole address')) {
          pasted = true;
          // The browser "on another machine": the authorization server's redirect, not followed.
          void fetch(url, { redirect: 'manual' }).then((response) => {
            const location = response.headers.get('location') ?? '';
            stdin.write('not a url\n');
            stdin.write(`${location.replace(/state=[^&]+/, 'state=forged')}\n`);
            stdin.write(`${location}\n`);
          });
        }
        done();
      },
    });
    const stdout: string[] = [];
    const code = await main(
      ['server', 'login', 'notes', '--authorize', 'print', '--timeout', '60'],
      {
        cwd: dir,
        stdin,
        stderr: stderrSink,
        stdout: new Writable({
          write(chunk: Buffer, _encoding, done) {
            stdout.push(chunk.toString());
            done();
          },
        }),
      },
    );
    expect(stderr).toMatch(/^Open this URL in a browser to log in:\n {2}http/m);
    expect(stderr).toMatch(
      /^Waiting up to 60 s for the browser to come back to http:\/\/127\.0\.0\.1:\d+\/callback \(Ctrl-C to stop\)\.\.\.$/m,
    );
    expect(stderr).toContain('Not taken: that is not a URL');
    expect(code).toBe(0);
    expect(stdout.join('')).toMatch(/^Logged in to server "notes"/);
    // The forged-state paste was dropped, the real one used: one authorization, one login.
    expect(fixture.stats.authorizations).toHaveLength(1);
    expect(await readdir(join(stateDir, 'oauth'))).toHaveLength(1);
  });
});
