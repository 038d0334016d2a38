import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { runInPty } from '../helpers/pty.js';
import { FAULT_SERVER } from '../servers/fixture.js';
import {
  addScriptedActors,
  agents,
  agentsArgv,
  makeProjectRepo,
  putFixtureFilesSkill,
  threadFiles,
} from './helpers.js';

/** The escape character, for matching terminal control sequences. */
const ESC = '\u001b';

// `agents` on a real pseudo-terminal (util-linux `script`): what an interactive user sees.
describe('agents on a terminal', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-tty-');
    await putFixtureFilesSkill(dir);
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: first } }]',
        '- content: done',
      ],
      { names: ['careful'] },
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'Ctrl-C at the approval prompt exits 130 without a stack trace, says how to resume and releases the thread lock',
    { timeout: 120_000 },
    async () => {
      let pressed = false;
      const thread = `ctrl-c-${randomUUID()}`;
      const run = await runInPty(
        agentsArgv('actor', 'run', 'careful', '--input', 'go', '--thread', thread),
        {
          cwd: dir,
          onOutput: (output, type) => {
            if (pressed || !output.includes('[a]pprove')) return;
            pressed = true;
            type('\u0003');
          },
        },
      );
      expect(pressed).toBe(true);
      expect(run.output).not.toMatch(/\n\s+at /);
      expect(run.output).not.toContain('Error: Interrupted');
      expect(run.output).toContain(`agents actor resume careful --thread ${thread} --approve`);
      expect(run.code).toBe(130);
      // The thread's folder is kept (the run is paused), its run lock is gone.
      const files = await threadFiles('careful', thread);
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter((path) => path.endsWith('/lock'))).toEqual([]);
    },
  );

  it(
    'Ctrl-D at the approval prompt pauses the run (exit 8, as a closed stdin) and nothing is written',
    { timeout: 120_000 },
    async () => {
      let pressed = false;
      const thread = `ctrl-d-${randomUUID()}`;
      const run = await runInPty(
        agentsArgv('actor', 'run', 'careful', '--input', 'go', '--thread', thread),
        {
          cwd: dir,
          onOutput: (output, type) => {
            if (pressed || !output.includes('[a]pprove')) return;
            pressed = true;
            type('\u0004');
          },
        },
      );
      expect(pressed).toBe(true);
      expect(run.output).not.toMatch(/\n\s+at /);
      expect(run.output).toContain(`agents actor resume careful --thread ${thread} --approve`);
      expect(run.code).toBe(8);
      // Still waiting: a later answer runs the call.
      const resumed = await agents(
        dir,
        'actor',
        'resume',
        'careful',
        '--thread',
        thread,
        '--approve',
        '--no-prompt',
      );
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('write_file');
    },
  );
});

// A read-only tool that takes 2.5 s and reports progress at the start and half-way.
describe('agents actor run shows a long tool call while it runs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-progress-');
    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'faulty', {
      transport: 'stdio',
      command: process.execPath,
      args: [FAULT_SERVER, 'normal'],
    });
    await store.put('skill', 'slowpoke', { mcpServers: ['faulty'] });
    await writeFile(
      join(dir, 'script.yaml'),
      '- tool_calls: [{ name: slow, args: { ms: 2500 } }]\n- content: done\n',
    );
    await store.put('actor', 'waiter', {
      skills: ['slowpoke'],
      model: 'scripted:script.yaml',
      policy: { mode: 'auto' },
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const run = ['actor', 'run', 'waiter', '--input', 'go', '--thread', 't1'];

  it(
    'on a terminal: a status line with spinner, elapsed time and the server progress, in colour unless NO_COLOR',
    { timeout: 120_000 },
    async () => {
      const colour = await runInPty(agentsArgv(...run), { cwd: dir });
      expect(colour.code).toBe(0);
      // Redrawn in place (carriage return + erase line), with the percentage and message.
      expect(colour.output).toMatch(
        new RegExp(`\r${ESC}\\[2K\\S+ slow \\S*\\d\\.\\d s\\S* · 50% half-way`),
      );
      expect(colour.output).toMatch(
        new RegExp(`\r${ESC}\\[2K\\S+ slow \\S*\\d\\.\\d s\\S* · 0% started`),
      );
      expect(colour.output).toMatch(/←\S* slow: slept 2500\S* \(\d\.\d s\)/);
      expect(colour.output).toContain('\x1b[32m←\x1b[39m');

      const plain = await runInPty(agentsArgv(...run.slice(0, -1), 't2'), {
        cwd: dir,
        env: { NO_COLOR: '1' },
      });
      expect(plain.code).toBe(0);
      expect(plain.output).toMatch(new RegExp(`\r${ESC}\\[2K. slow \\d\\.\\d s · 50% half-way`));
      expect(plain.output).not.toMatch(new RegExp(`${ESC}\\[3\\dm`));
      expect(plain.output).toMatch(/← slow: slept 2500 \(\d\.\d s\)/);
    },
  );

  it(
    'in a pipe: plain progress lines for a call over a second, no escapes; with --json: progress events',
    { timeout: 120_000 },
    async () => {
      const piped = await agents(dir, ...run);
      expect(piped.code).toBe(0);
      expect(piped.stdout).not.toContain('\x1b');
      expect(piped.stdout).toMatch(/^… slow \d\.\d s: 50% half-way$/m);
      expect(piped.stdout).toMatch(/^← slow: slept 2500 \(\d\.\d s\)$/m);

      const json = await agents(dir, ...run.slice(0, -1), 't3', '--json');
      const events = json.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; message?: string; total?: number });
      expect(events.filter((event) => event.type === 'tool-progress')).toEqual([
        expect.objectContaining({ name: 'slow', progress: 0, total: 2500, message: 'started' }),
        expect.objectContaining({ name: 'slow', progress: 1250, total: 2500, message: 'half-way' }),
      ]);
    },
  );
});
