import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents } from './helpers.js';

// `actor add` resolves skills from files only (no server starts), so it runs in process.
describe('agents actor add checks the model before storing the actor', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-actor-add-'));
    await createWorkspaceStore(join(dir, '.agents')).put('skill', 'files', {
      tools: ['read_file'],
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const actorFile = () => join(dir, '.agents', 'actors', 'coder.yaml');

  it('without --model needs .agents/actors/NAME.script.yaml and says how to write it', async () => {
    const missing = await agents(dir, 'actor', 'add', 'coder', '--skill', 'files');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(join(dir, '.agents', 'actors', 'coder.script.yaml'));
    expect(missing.stderr).toMatch(/Write it first, a YAML list of model turns:\n.*tool_calls/);
    expect(missing.stderr).toContain('--model provider:model');
    await expect(stat(actorFile())).rejects.toMatchObject({ code: 'ENOENT' });

    await mkdir(join(dir, '.agents', 'actors'));
    await writeFile(
      join(dir, '.agents', 'actors', 'coder.script.yaml'),
      '- tool_calls: [{ name: read_file, args: { path: README.md } }]\n- content: done\n',
    );
    const added = await agents(dir, 'actor', 'add', 'coder', '--skill', 'files');
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toContain(
      `model script: ${join(dir, '.agents', 'actors', 'coder.script.yaml')}`,
    );
    // Editors find the JSON Schema through the first line; the record itself is what was given.
    const written = await readFile(actorFile(), 'utf8');
    const [modeline, ...rest] = written.split('\n');
    expect(modeline).toMatch(
      /^# yaml-language-server: \$schema=(\.\.\/)+.*schemas\/actor\.schema\.json$/,
    );
    expect(rest.join('\n')).toBe('skills:\n  - files\n');
    const schemaPath = join(dirname(actorFile()), modeline!.split('$schema=')[1]!);
    expect(JSON.parse(await readFile(schemaPath, 'utf8'))).toHaveProperty('properties.skills');
  });

  it('reads scripted:PATH against the project and reports a broken script with line and column', async () => {
    const missing = await agents(
      dir,
      'actor',
      'add',
      'coder',
      '--skill',
      'files',
      '--model',
      'scripted:scripts/run.yaml',
    );
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(`replays the script ${join(dir, 'scripts', 'run.yaml')}`);

    await mkdir(join(dir, 'scripts'));
    await writeFile(join(dir, 'scripts', 'run.yaml'), '- content: hi\n- tool_cals: []\n');
    const broken = await agents(
      dir,
      'actor',
      'add',
      'coder',
      '--skill',
      'files',
      '--model',
      'scripted:scripts/run.yaml',
    );
    expect(broken.code).toBe(3);
    expect(broken.stderr).toContain(`${join(dir, 'scripts', 'run.yaml')}:2:3`);
    expect(broken.stderr).toContain('"tool_cals"');
    await expect(stat(actorFile())).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('accepts provider:model without contacting anyone and rejects any other form', async () => {
    const bad = await agents(dir, 'actor', 'add', 'coder', '--skill', 'files', '--model', 'gpt4');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--model gpt4: use provider:model .*scripted:PATH or scripted/);
    const empty = await agents(
      dir,
      'actor',
      'add',
      'coder',
      '--skill',
      'files',
      '--model',
      'scripted:',
    );
    expect(empty.code).toBe(2);
    const good = await agents(
      dir,
      'actor',
      'add',
      'coder',
      '--skill',
      'files',
      '--model',
      'openai:gpt-4.1-mini',
    );
    expect(good.code).toBe(0);
    expect(await readFile(actorFile(), 'utf8')).toContain('model: openai:gpt-4.1-mini');
  });

  it("refuses a script that calls a tool the actor's skills do not provide, naming step and tools", async () => {
    await mkdir(join(dir, 'scripts'));
    await writeFile(
      join(dir, 'scripts', 'typo.yaml'),
      '- tool_calls: [{ name: read_file, args: { path: a } }]\n- tool_calls: [{ name: raed_file }]\n',
    );
    const model = ['--model', 'scripted:scripts/typo.yaml'];
    const refused = await agents(dir, 'actor', 'add', 'coder', '--skill', 'files', ...model);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(
      `The model script ${join(dir, 'scripts', 'typo.yaml')} calls "raed_file" (step 2), which the skills files do not provide; they provide: read_file.`,
    );
    await expect(stat(actorFile())).rejects.toMatchObject({ code: 'ENOENT' });
    const forced = await agents(
      dir,
      ...['actor', 'add', 'coder', '--skill', 'files', ...model, '--no-validate'],
    );
    expect(forced.code).toBe(0);
  });

  it('documents the model forms and the script format in its help', async () => {
    const help = await agents(dir, 'actor', 'add', '--help');
    expect(help.stdout).toContain(
      'scripted        the default: the script <workspace>/actors/NAME.script.yaml',
    );
    expect(help.stdout).toContain('- tool_calls: [{ name: write_file, args:');
  });
});

describe('agents actor list (#26)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-actor-list-'));
    await createWorkspaceStore(join(dir, '.agents')).put('skill', 'files', {
      tools: ['read_file'],
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lists actors whatever script files (NAME.script.yaml, .yml) sit beside them', async () => {
    await mkdir(join(dir, '.agents', 'actors'), { recursive: true });
    await writeFile(join(dir, '.agents', 'actors', 'coder.script.yaml'), '- content: done\n');
    await writeFile(join(dir, '.agents', 'actors', 'other.script.yml'), '- content: x\n');
    expect((await agents(dir, 'actor', 'add', 'coder', '--skill', 'files')).code).toBe(0);
    const listed = await agents(dir, 'actor', 'list');
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^coder\s+files\s+scripted/m);
    expect(listed.stdout).not.toContain('script.y');
    const json = JSON.parse((await agents(dir, '--json', 'actor', 'list')).stdout) as {
      actors: Array<{ name: string }>;
      problems: unknown[];
    };
    expect(json.actors.map((actor) => actor.name)).toEqual(['coder']);
    expect(json.problems).toEqual([]);
  });
});
