import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agentsProcess, makeProjectRepo } from './helpers.js';

const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');

describe("an Agent Skill's allowed-tools survive a resume in a new process", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-allowed-tools-resume-');
    const skillDir = join(dir, 'agent-skills', 'notes-only');
    await mkdir(skillDir, { recursive: true });
    await writeFile(
      join(skillDir, 'SKILL.md'),
      [
        '---',
        'name: notes-only',
        'description: Write notes. Use when asked to write a note.',
        'allowed-tools: write_note',
        '---',
        'Only write notes.',
        '',
      ].join('\n'),
    );
    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'notes', {
      transport: 'stdio',
      command: process.execPath,
      args: [NOTES_SERVER],
      overrides: {
        write_note: { pathArguments: ['path'] },
        read_note: { pathArguments: ['path'] },
      },
    });
    await store.put('skill', 'notes', { mcpServers: ['notes'], agentSkills: [skillDir] });
    await writeFile(
      join(dir, 'script.yaml'),
      [
        '- tool_calls: [{ name: activate_skill, args: { skill: notes-only } }]',
        '- tool_calls: [{ name: write_note, args: { path: a.md, text: "A" } }]',
        // read_note is read-only (the policy would allow it) but not in allowed-tools.
        '- tool_calls: [{ name: read_note, args: { path: a.md } }]',
        '- content: done',
        '',
      ].join('\n'),
    );
    // Policy mode ask (the default): write_note waits for approval, so the run pauses.
    await store.put('actor', 'bot', {
      skills: ['notes'],
      model: 'scripted:script.yaml',
      checkpointer: { type: 'sqlite', path: '.agents/checkpoints.sqlite' },
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'refuses a tool outside allowed-tools after `agents actor resume` in another process',
    { timeout: 180_000 },
    async () => {
      const paused = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'write a note',
        '--thread',
        't1',
        '--json',
      ]);
      expect(paused.code, paused.stderr).toBe(8);
      expect(paused.stderr).toContain('mcp:notes/write_note waits for approval');

      const resumed = await agentsProcess(dir, [
        'actor',
        'resume',
        'bot',
        '--thread',
        't1',
        '--approve',
        '--json',
      ]);
      expect(resumed.code, resumed.stderr).toBe(0);
      const ends = resumed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((event) => event['type'] === 'tool-call-end');
      const write = ends.find((event) => event['name'] === 'write_note');
      const read = ends.find((event) => event['name'] === 'read_note');
      expect(write?.['isError']).toBe(false);
      expect(read?.['isError']).toBe(true);
      expect(String(read?.['text'])).toContain(
        'Tool "read_note" is not allowed while skill "notes-only" is active',
      );
    },
  );
});
