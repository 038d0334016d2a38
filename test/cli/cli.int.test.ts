import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectStateDir } from '../../src/sandbox/state-dir.js';
import { isProcessGroupAlive } from '../../src/servers/process-group.js';
import { agents, agentsProcess, makeProjectRepo } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NOTES_SERVER = join(ROOT, 'test', 'fixtures', 'workspace', 'notes-server.mjs');
const FAULT_SERVER = join(ROOT, 'test', 'fixtures', 'fault-server.mjs');

describe('agents CLI', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-cli-');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "prints the servers' tool-list changes and crashes while the run goes on",
    { timeout: 120_000 },
    async () => {
      await agents(
        dir,
        'server',
        'add',
        'flaky',
        '--no-validate',
        '--',
        process.execPath,
        FAULT_SERVER,
        'list-changed',
      );
      await agents(dir, 'skill', 'add', 'flaky', '--server', 'flaky', '--no-validate');
      await writeFile(
        join(dir, 'script.yaml'),
        [
          '- tool_calls: [{ name: add_tool, args: { name: extra } }]',
          // Time for the debounced re-list after list_changed.
          '- tool_calls: [{ name: slow, args: { ms: 3000 } }]',
          '- tool_calls: [{ name: crash }]',
          '- content: done',
        ].join('\n'),
      );
      await agents(
        dir,
        'actor',
        'add',
        'bot',
        '--skill',
        'flaky',
        '--model',
        'scripted:script.yaml',
        '--checkpointer',
        'memory',
        '--policy',
        'auto',
      );
      const run = await agents(dir, 'actor', 'run', 'bot', '--input', 'go');
      expect(run.code).toBe(0);
      expect(run.stdout.trim().split('\n').at(-1)).toBe('done');
      expect(run.stderr).toContain(
        'server: "flaky" tools changed (list_changed): +mcp:flaky/extra',
      );
      // The crash is named once, with the server's last stderr lines, then the restart.
      expect(run.stderr.match(/was killed by SIGKILL during call/g)).toHaveLength(1);
      expect(run.stderr).toContain('crash: about to SIGKILL myself');
      expect(run.stderr).toMatch(/server: "flaky" stopped; restart 1\/\d+ in \d+ ms/);
    },
  );

  it(
    'registers a server, tool resources, a skill and an actor, validating each step',
    { timeout: 120_000 },
    async () => {
      const add = await agents(dir, 'server', 'add', 'notes', '--', process.execPath, NOTES_SERVER);
      expect(add.stderr).toBe('');
      expect(add.code).toBe(0);
      expect(add.stdout).toMatch(/Added server "notes".*\n.*write_note/);
      expect(await readFile(join(dir, '.agents', 'servers', 'notes.yaml'), 'utf8')).toContain(
        'transport: stdio',
      );

      const broken = await agents(
        dir,
        'server',
        'add',
        'ghost',
        '--',
        join(dir, 'no-such-command'),
      );
      expect(broken.code).toBe(5);
      expect(broken.stderr).toMatch(/ghost/);

      const list = await agents(dir, 'server', 'list', '--json');
      expect(
        JSON.parse(list.stdout).servers.map((server: { name: string }) => server.name),
      ).toEqual(['notes']);

      const test = await agents(dir, 'server', 'test', 'notes');
      expect(test.code).toBe(0);
      expect(test.stdout).toMatch(/read_note\s+true/);

      expect(
        (
          await agents(
            dir,
            'tool',
            'add',
            'writer',
            '--server',
            'notes',
            '--tool',
            'write_note',
            '--id',
            'notes.write',
          )
        ).code,
      ).toBe(0);
      const absent = await agents(
        dir,
        'tool',
        'add',
        'nope',
        '--server',
        'notes',
        '--tool',
        'nope',
      );
      expect(absent.code).toBe(6);
      expect(absent.stderr).toMatch(/has no tool "nope"; it has: .*write_note/);

      const show = await agents(dir, 'tool', 'show', 'notes.write');
      expect(show.code).toBe(0);
      expect(show.stdout).toMatch(/writes\s+true\s+name-heuristic/);
      const showJson = JSON.parse(
        (await agents(dir, 'tool', 'show', 'read_file', '--json')).stdout,
      );
      expect(showJson).toMatchObject({ id: 'builtin:read_file', source: 'builtin' });
      // Any tool of a registered server, by its id, without a tool resource.
      const showMcp = JSON.parse(
        (await agents(dir, 'tool', 'show', 'mcp:notes/read_note', '--json')).stdout,
      );
      expect(showMcp).toMatchObject({ id: 'mcp:notes/read_note', serverName: 'notes' });
      expect(showMcp.capabilities.readOnly).toMatchObject({ value: true });
      const noTool = await agents(dir, 'tool', 'show', 'mcp:notes/nope');
      expect(noTool.code).toBe(4);
      expect(noTool.stderr).toMatch(/Server "notes" has no tool "nope"; it has: .*read_note/);
      const noServer = await agents(dir, 'tool', 'show', 'mcp:ghost/x');
      expect(noServer.code).toBe(4);
      expect(noServer.stderr).toMatch(/No server named "ghost".*agents server add/);
      const unknown = await agents(dir, 'tool', 'show', 'nope');
      expect(unknown.code).toBe(4);
      expect(unknown.stderr).toMatch(/agents tool show mcp:SERVER\/TOOL.*agents skill show SKILL/s);

      expect((await agents(dir, 'tool', 'disable', 'notes.write')).code).toBe(0);
      const disabled = await agents(
        dir,
        'skill',
        'add',
        'notes',
        '--tool',
        'notes.write',
        '--tool',
        'read_file',
      );
      expect(disabled.code).toBe(6);
      expect(disabled.stderr).toMatch(/TOOL_DISABLED|disabled/);
      expect((await agents(dir, 'tool', 'enable', 'notes.write')).code).toBe(0);

      const skill = await agents(
        dir,
        'skill',
        'add',
        'notes',
        '--tool',
        'notes.write',
        '--tool',
        'read_file',
        '--server',
        'notes',
      );
      expect(skill.code).toBe(0);
      expect(skill.stdout).toMatch(/with tools: .*write_note/);
      const skillShow = JSON.parse((await agents(dir, 'skill', 'show', 'notes', '--json')).stdout);
      // write_note comes through the tool resource, under its stable id, and only once.
      const skillToolIds = skillShow.tools.map((tool: { id: string }) => tool.id);
      expect(skillToolIds).toContain('notes.write');
      expect(skillToolIds).toContain('mcp:notes/read_note');
      expect(skillToolIds).not.toContain('mcp:notes/write_note');

      const missingSkill = await agents(dir, 'actor', 'add', 'bot', '--skill', 'ghost');
      expect(missingSkill.code).toBe(4);
      await writeFile(join(dir, 'script.yaml'), '- content: hi\n');
      expect(
        (
          await agents(
            dir,
            'actor',
            'add',
            'bot',
            '--skill',
            'notes',
            '--model',
            'scripted:script.yaml',
            // The scripted write runs unattended; approvals are tested in approval.int.test.ts.
            '--policy',
            'auto',
          )
        ).code,
      ).toBe(0);
      const actors = JSON.parse((await agents(dir, 'actor', 'list', '--json')).stdout);
      expect(actors.actors[0]).toMatchObject({
        name: 'bot',
        skills: ['notes'],
        model: 'scripted:script.yaml',
      });
    },
  );

  it('reports usage errors with exit code 2 and prints --help for every command', async () => {
    const unknown = await agents(dir, 'server', 'fly');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown command "server fly"/);
    const help = await agents(dir, 'actor', 'run', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agents actor run NAME --input TEXT/);
    const badOption = await agents(dir, 'server', 'list', '--bogus');
    expect(badOption.code).toBe(2);
    await mkdir(join(dir, '.agents', 'actors'), { recursive: true });
    await writeFile(join(dir, '.agents', 'actors', 'bad.yaml'), 'skills: [a]\nmodle: x\n');
    const broken = await agents(dir, 'actor', 'list');
    expect(broken.code).toBe(3);
    expect(broken.stderr).toContain(
      `${join(dir, '.agents', 'actors', 'bad.yaml')}:2:1: unknown field "modle"`,
    );
  });

  it(
    'runs an actor from the binary, streaming tool calls, then stops its servers',
    { timeout: 120_000 },
    async () => {
      await agents(
        dir,
        'server',
        'add',
        'notes',
        '--no-validate',
        '--',
        process.execPath,
        NOTES_SERVER,
      );
      await agents(
        dir,
        'skill',
        'add',
        'notes',
        '--server',
        'notes',
        '--tool',
        'read_file',
        '--no-validate',
      );
      await writeFile(
        join(dir, 'script.yaml'),
        '- tool_calls: [{ name: get_pid }]\n- tool_calls: [{ name: write_note, args: { path: out.md, text: "x" } }]\n- content: all done\n',
      );
      await agents(
        dir,
        'actor',
        'add',
        'bot',
        '--skill',
        'notes',
        '--model',
        'scripted:script.yaml',
        '--checkpointer',
        'memory',
        // The scripted write runs unattended; approvals are tested in approval.int.test.ts.
        '--policy',
        'auto',
      );
      // Server process groups are recorded here while they live (see orphan-reaper): the host's
      // view of them, whatever pid the server sees inside its own pid namespace (bubblewrap).
      const runDir = await mkdtemp(join(tmpdir(), 'agents-cli-run-'));
      const run = await agentsProcess(
        dir,
        ['actor', 'run', 'bot', '--input', 'go', '--thread', 't-1'],
        undefined,
        { AGENTS_SERVERS_RUN_DIR: runDir },
      );
      expect(run.stderr).toContain('thread: t-1');
      expect(run.code).toBe(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines[0]).toBe('→ get_pid {}');
      expect(lines[1]).toMatch(/^← get_pid: \d+$/);
      expect(lines[2]).toBe('→ write_note {"path":"out.md","text":"x"}');
      expect(lines[3]).toMatch(/^← write_note: wrote /);
      expect(lines[4]).toBe('  changed: A out.md');
      expect(lines[5]).toBe('all done');
      // A record is removed only once its whole process group is gone.
      expect(await readdir(runDir)).toEqual([]);
      await rm(runDir, { recursive: true, force: true });
    },
  );

  it(
    'deactivates on Ctrl-C: the run stops, servers are gone, exit code 130',
    { timeout: 120_000 },
    async () => {
      await agents(
        dir,
        'server',
        'add',
        'notes',
        '--no-validate',
        '--',
        process.execPath,
        NOTES_SERVER,
      );
      await agents(dir, 'skill', 'add', 'notes', '--server', 'notes', '--no-validate');
      await writeFile(
        join(dir, 'script.yaml'),
        '- tool_calls: [{ name: get_pid }]\n- tool_calls: [{ name: wait, args: { ms: 600000 } }]\n- content: never\n',
      );
      await agents(
        dir,
        'actor',
        'add',
        'bot',
        '--skill',
        'notes',
        '--model',
        'scripted:script.yaml',
        '--checkpointer',
        'memory',
        // `wait` has no read verb, so `ask` would pause for approval before the call; auto runs
        // it, so Ctrl-C lands while the server is busy.
        '--policy',
        'auto',
      );
      let signalled = false;
      const runDir = await mkdtemp(join(tmpdir(), 'agents-cli-run-'));
      const groups: number[] = [];
      const run = await agentsProcess(
        dir,
        ['actor', 'run', 'bot', '--input', 'go'],
        (stdout, child) => {
          if (!signalled && stdout.includes('→ wait')) {
            signalled = true;
            // The host's pid of the server's process group, from its reaper record.
            for (const name of readdirSync(runDir)) groups.push(Number(name.split('-')[1]));
            child.kill('SIGINT');
          }
        },
        { AGENTS_SERVERS_RUN_DIR: runDir },
      );
      expect(signalled).toBe(true);
      expect(run.code).toBe(130);
      expect(run.stderr).toMatch(/interrupted/);
      const pid = Number(/← get_pid: (\d+)/.exec(run.stdout)?.[1]);
      expect(pid).toBeGreaterThan(0);
      expect(groups).toHaveLength(1);
      expect(isProcessGroupAlive(groups[0]!)).toBe(false);
      await rm(runDir, { recursive: true, force: true });
      // The run's sandbox went away with the actor: nothing left in the project's state folder.
      const sandboxes = join(projectStateDir(dir), 'sandboxes');
      expect(existsSync(sandboxes) ? readdirSync(sandboxes) : []).toEqual([]);
    },
  );
});
