import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agents, makeProjectRepo } from './helpers.js';

const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');

describe('a server named by a project-relative path (./...)', () => {
  let dir: string;
  beforeEach(async () => {
    // Beside this checkout, not in the OS temp folder: the tools/notes.mjs below imports the
    // fixture server from the checkout, and a confined server sees a private /tmp (only the top
    // folder holding its own files is kept), so both must share one top folder when the checkout
    // itself lives under /tmp.
    dir = await makeProjectRepo(
      'agents-project-paths-',
      join(import.meta.dirname, '..', '..', '.test-build'),
    );
    // Like ./node_modules/...: a file of the project that git ignores (here through the repo's
    // info/exclude), so the sandbox (made from the working tree, ignored files left out) does
    // not have it.
    await appendFile(join(dir, '.git', 'info', 'exclude'), '/tools/\n');
    await mkdir(join(dir, 'tools'));
    await writeFile(
      join(dir, 'tools', 'notes.mjs'),
      `import ${JSON.stringify(pathToFileURL(NOTES_SERVER).href)};\n`,
    );
    await writeFile(
      join(dir, 'script.yaml'),
      '- tool_calls: [{ name: write_note, args: { path: out.md, text: "x" } }]\n- content: all done\n',
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'starts from the project folder while running in the sandbox, and git sees only the YAML',
    { timeout: 120_000 },
    async () => {
      const add = await agents(
        dir,
        'server',
        'add',
        'notes',
        '--',
        process.execPath,
        './tools/notes.mjs',
      );
      expect(add.stderr).toBe('');
      expect(add.code).toBe(0);
      // The record stays portable: the path as typed.
      const record = await readFile(join(dir, '.agents', 'servers', 'notes.yaml'), 'utf8');
      expect(record).toContain('- ./tools/notes.mjs');
      expect(record).not.toContain(dir);

      const show = await agents(dir, 'tool', 'show', 'mcp:notes/write_note');
      expect(show.stderr).toBe('');
      expect(show.stdout).toMatch(/^id: +mcp:notes\/write_note$/m);
      expect(show.stdout).toMatch(/writes\s+true\s+name-heuristic/);

      expect((await agents(dir, 'skill', 'add', 'notes', '--server', 'notes')).code).toBe(0);
      const actor = await agents(
        dir,
        'actor',
        'add',
        'bot',
        '--skill',
        'notes',
        '--model',
        'scripted:script.yaml',
        '--policy',
        'auto',
      );
      expect(actor.stderr).toBe('');
      expect(actor.code).toBe(0);

      const run = await agents(
        dir,
        ...['actor', 'run', 'bot', '--input', 'go', '--thread', 't1', '--keep-sandbox'],
      );
      expect(run.stderr).not.toMatch(/MODULE_NOT_FOUND|Cannot find module/);
      expect(run.code).toBe(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines[0]).toBe('→ write_note {"path":"out.md","text":"x"}');
      // Sandbox paths in results are rewritten back to logical ones.
      // A call over a second gets its elapsed time appended (a loaded machine).
      expect(lines[1]).toMatch(/^← write_note: wrote out\.md( \(\d+\.\d s\))?$/);
      expect(lines[2]).toBe('  changed: A out.md');
      expect(lines.at(-1)).toBe('all done');
      // The server ran with the sandbox as its working folder: the write landed there only,
      // and the sandbox has no copy of the ignored server script.
      const sandbox = /sandbox: (.+)$/m.exec(run.stderr)?.[1] ?? '';
      // Outside the project, in the workspace's folder of the (test) state folder.
      expect(sandbox.startsWith(join(process.env['AGENTS_STATE_DIR']!, 'workspaces'))).toBe(true);
      expect(sandbox.startsWith(dir)).toBe(false);
      expect(await readFile(join(sandbox, 'out.md'), 'utf8')).toBe('x');
      expect(existsSync(join(sandbox, 'README.md'))).toBe(true);
      expect(existsSync(join(sandbox, 'tools', 'notes.mjs'))).toBe(false);
      expect(existsSync(join(dir, 'out.md'))).toBe(false);

      // Checkpoints, audit log and the thread's sandbox stay out of `git status`.
      expect(existsSync(join(dir, '.agents', 'checkpoints.sqlite'))).toBe(true);
      expect(existsSync(join(dir, '.agents', 'audit.jsonl'))).toBe(true);
      const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], {
        cwd: dir,
        encoding: 'utf8',
      })
        .trim()
        .split('\n')
        .map((line) => line.slice(3))
        .sort();
      expect(status).toEqual([
        '.agents/.gitignore',
        '.agents/actors/bot.yaml',
        '.agents/servers/notes.yaml',
        '.agents/skills/notes.yaml',
        'script.yaml',
      ]);
    },
  );

  it(
    'takes the same file without ./, and a missing one is named with the folder looked in',
    { timeout: 60_000 },
    async () => {
      const add = await agents(dir, 'server', 'add', 'notes', '--', 'node', 'tools/notes.mjs');
      expect(add.stderr).toBe('');
      expect(add.code).toBe(0);
      const record = await readFile(join(dir, '.agents', 'servers', 'notes.yaml'), 'utf8');
      expect(record).toContain('- tools/notes.mjs');

      const missing = await agents(dir, 'server', 'add', 'gone', '--', 'node', 'tools/gone.mjs');
      expect(missing.code).toBe(5);
      expect(missing.stderr).toContain(
        `"tools/gone.mjs" is not a file of the project folder ${dir} (looked there`,
      );
      expect(existsSync(join(dir, '.agents', 'servers', 'gone.yaml'))).toBe(false);
    },
  );
});
