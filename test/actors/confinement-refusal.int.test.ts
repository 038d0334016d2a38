import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { confinementRefusalNote } from '../../src/confinement/confinement.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';

// The published memory server keeps its graph beside its own code by default
// (node_modules/@modelcontextprotocol/server-memory/dist/memory.jsonl): outside the sandbox.
const MEMORY_SERVER = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-memory/dist/index.js',
);
const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

describe('confinement says what it refused (issue 23)', () => {
  let dir: string;
  let store: WorkspaceStore;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-refusal-');
    store = createWorkspaceStore(join(dir, '.agents'));
    await writeFile(
      join(dir, 'script.yaml'),
      [
        '- tool_calls:',
        '    - name: create_entities',
        '      args: { entities: [{ name: Ada, entityType: person, observations: [wrote notes] }] }',
        '- content: done',
        '',
      ].join('\n'),
    );
    await store.put('skill', 'memory', { mcpServers: ['memory'] });
    await store.put('actor', 'rememberer', {
      skills: ['memory'],
      model: 'scripted:script.yaml',
      policy: { mode: 'auto' },
      checkpointer: { type: 'memory' },
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names EROFS from its text and points at sandbox.writable', () => {
    expect(
      confinementRefusalNote('memory', "EROFS: read-only file system, open '/srv/mem/m.jsonl'"),
    ).toMatch(
      /refused a write outside the sandbox \(\/srv\/mem\/m\.jsonl\).*servers\/memory\.yaml.*sandbox: \{ writable: \[\/srv\/mem\] \}/,
    );
    expect(confinementRefusalNote('memory', 'ENOENT: no such file')).toBeUndefined();
  });

  it(
    'server-memory writing beside its own code: the tool error and the CLI name the cause; a sandbox.writable exception lets it write, and doctor lists it',
    { timeout: 180_000 },
    async () => {
      if (!BUBBLEWRAP.available) {
        expect(MUST_CONFINE).toBe(false);
        return;
      }
      await store.put('server', 'memory', {
        transport: 'stdio',
        command: process.execPath,
        args: [MEMORY_SERVER],
      });
      const refused = await agents(dir, 'actor', 'run', 'rememberer', '--input', 'remember Ada');
      // The run itself succeeds: the tool failed, and says why.
      expect(refused.code, refused.stderr).toBe(0);
      expect(refused.stdout).toMatch(/EROFS/);
      expect(refused.stdout).toContain('OS confinement refused a write outside the sandbox');
      // The folder it tried to write, as the exception to add (the note is printed whole).
      expect(refused.stdout).toContain(`(${join(dirname(MEMORY_SERVER), 'memory.jsonl')}`);
      expect(refused.stdout).toContain(`sandbox: { writable: [${dirname(MEMORY_SERVER)}] }`);
      expect(existsSync(join(dirname(MEMORY_SERVER), 'memory.jsonl'))).toBe(false);

      // The explicit exception: its own data folder, writable.
      const data = join(dir, '..', `${dir.split('/').pop()}-memory`);
      await mkdir(data, { recursive: true });
      try {
        await store.put(
          'server',
          'memory',
          {
            transport: 'stdio',
            command: process.execPath,
            args: [MEMORY_SERVER],
            env: { MEMORY_FILE_PATH: join(data, 'memory.jsonl') },
            sandbox: { writable: [data] },
          },
          { overwrite: true },
        );
        const allowed = await agents(dir, 'actor', 'run', 'rememberer', '--input', 'remember Ada');
        expect(allowed.code, allowed.stderr).toBe(0);
        expect(allowed.stdout).not.toContain('refused a write');
        expect(await readFile(join(data, 'memory.jsonl'), 'utf8')).toContain('Ada');

        const doctor = await agents(dir, 'doctor');
        expect(doctor.stdout).toMatch(new RegExp(`server "memory".*writable.*${data}`));
      } finally {
        await rm(data, { recursive: true, force: true });
      }
    },
  );
});
