import { execFile, execFileSync } from 'node:child_process';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProjectRepo } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NOTES_SERVER = join(ROOT, 'test', 'fixtures', 'workspace', 'notes-server.mjs');
// Inside the repo, so the built files resolve this checkout's node_modules like `dist/` does.
const OUT = join(ROOT, '.test-build', `cli-${process.pid}`);
const run = promisify(execFile);

/** Runs the built `agents` binary (what `bin` points at after `npm run build`). */
async function built(cwd: string, ...argv: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(OUT, 'cli', 'main.js'), ...argv], {
      cwd,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('the built agents binary (tsc output, as installed)', () => {
  let dir: string;
  beforeAll(() => {
    // The package's own build config, into a private folder (the real dist/ is left alone).
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        OUT,
      ],
      { cwd: ROOT, stdio: 'pipe' },
    );
    // The step `npm run build` runs after tsc (prepack runs `npm run build`).
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'bin-executable.mjs'), OUT], {
      cwd: ROOT,
      stdio: 'pipe',
    });
  }, 180_000);

  it('keeps the bin executable after every build path (build, prepack)', async () => {
    const scripts = (
      JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(scripts.build).toMatch(
      /^tsc -p tsconfig\.build\.json && node scripts\/bin-executable\.mjs$/,
    );
    expect(scripts.prepack).toContain('npm run build');
    const mode = (await stat(join(OUT, 'cli', 'main.js'))).mode;
    expect(mode & 0o111).toBe(0o111);
    // Run as a shell runs an `npm link`ed bin: the file itself, through its shebang.
    const { stdout } = await run(join(OUT, 'cli', 'main.js'), ['--help']);
    expect(stdout).toContain('Usage: agents');
  });
  afterAll(async () => {
    await rm(OUT, { recursive: true, force: true });
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it(
    'registers, lists, runs and removes: server, skill, tool list, actor',
    { timeout: 120_000 },
    async () => {
      dir = await makeProjectRepo('agents-built-');
      const help = await built(dir, '--help');
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('Usage: agents');

      const server = await built(
        dir,
        'server',
        'add',
        'notes',
        '--',
        process.execPath,
        NOTES_SERVER,
      );
      expect(server.stderr).toBe('');
      expect(server.stdout).toMatch(/answered \(protocol [\d-]+\) with 4 tools/);
      expect((await built(dir, 'skill', 'add', 'notes', '--server', 'notes')).code).toBe(0);
      const skills = await built(dir, 'skill', 'list');
      expect(skills.stdout).toMatch(/^notes\s+-\s+notes/m);
      const tools = await built(dir, 'tool', 'list');
      expect(tools.stdout).toContain('Built-in tools: read_file, write_file');

      await writeFile(
        join(dir, 'script.yaml'),
        '- tool_calls: [{ name: write_note, args: { path: a.md, text: hi } }]\n- content: finished\n',
      );
      const actor = await built(
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
        '--checkpointer',
        'memory',
      );
      expect(actor.code).toBe(0);
      const ran = await built(dir, 'actor', 'run', 'bot', '--input', 'go');
      expect(ran.code).toBe(0);
      expect(ran.stdout).toContain('→ write_note');
      expect(ran.stdout).toContain('changed: A a.md');
      expect(ran.stdout.trim().split('\n').at(-1)).toBe('finished');

      // Removal in use is refused; top down it works.
      expect((await built(dir, 'server', 'remove', 'notes')).code).toBe(2);
      for (const [kind, name] of [
        ['actor', 'bot'],
        ['skill', 'notes'],
        ['server', 'notes'],
      ]) {
        const removed = await built(dir, kind!, 'remove', name!);
        expect(removed.code).toBe(0);
      }
      expect((await built(dir, 'server', 'list')).stdout.trim()).toBe('(none)');
      // The user's repo holds only what the commands wrote under .agents/.
      const status = execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' });
      expect(
        status
          .split('\n')
          .filter(
            (line) => line !== '' && !line.includes('.agents/') && !line.includes('script.yaml'),
          ),
      ).toEqual([]);
    },
  );
});
