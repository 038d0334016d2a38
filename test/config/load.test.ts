import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadYamlFile, parseYaml } from '../../src/config/load.js';
import type { ConfigProblem } from '../../src/config/load.js';
import { configJsonSchemas } from '../../src/config/json-schema.js';
import { ActorSchema } from '../../src/config/actor-schema.js';
import { ServerConfigSchema } from '../../src/config/server-schema.js';
import { SkillSchema } from '../../src/config/skill-schema.js';
import { AgentsError } from '../../src/errors.js';

function problemsOf(run: () => unknown): { error: AgentsError; problems: ConfigProblem[] } {
  try {
    run();
  } catch (error) {
    if (!AgentsError.isInstance(error)) throw error;
    return { error, problems: error.details['problems'] as ConfigProblem[] };
  }
  throw new Error('expected the parse to fail');
}

describe('parseYaml', () => {
  it('returns typed config with schema defaults for a valid server file', () => {
    const config = parseYaml(
      'transport: stdio\ncommand: node\nargs: [server.js]\ntimeouts:\n  callMs: 1000\n',
      ServerConfigSchema,
      { file: 'servers/fs.yaml' },
    );
    expect(config.transport).toBe('stdio');
    if (config.transport !== 'stdio') throw new Error('narrowing');
    expect(config.args).toEqual(['server.js']);
    expect(config.timeouts?.callMs).toBe(1000);
    expect(config.timeouts?.startupMs).toBe(30_000);
    expect(config.trusted).toBe(false);
  });

  it('reports broken YAML with file, line and column', () => {
    const { error, problems } = problemsOf(() =>
      parseYaml('transport: stdio\ncommand: [node\nargs: x\n', ServerConfigSchema, {
        file: 'servers/broken.yaml',
      }),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(problems[0]?.line).toBeGreaterThanOrEqual(2);
    expect(problems[0]?.message).toMatch(/invalid YAML/);
    expect(error.message).toMatch(/servers\/broken\.yaml:\d+:\d+/);
  });

  it('reports an unknown field at the key, with its path and name', () => {
    const { error, problems } = problemsOf(() =>
      parseYaml('transport: stdio\ncommand: node\ntimeouts:\n  callMS: 5\n', ServerConfigSchema, {
        file: 'fs.yaml',
      }),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ path: 'timeouts', line: 4, column: 3 });
    expect(problems[0]?.message).toContain('"callMS"');
    expect(error.message).toContain('fs.yaml:4:3: timeouts: unknown field "callMS"');
  });

  it('reports a missing field at its parent object and says what was expected', () => {
    const { problems } = problemsOf(() =>
      parseYaml('description: x\nmodel: scripted\n', ActorSchema, { file: 'actors/a.yaml' }),
    );
    expect(problems[0]).toMatchObject({ path: 'skills', line: 1, column: 1 });
    expect(problems[0]?.message).toMatch(/missing required field \(expected array\)/);
  });

  it('says what type was written, not "missing", when a field has the wrong type', () => {
    const server = problemsOf(() =>
      parseYaml(
        'transport: stdio\ncommand: node\nargs: /x\ntimeouts: { startupMs: "fast" }\n',
        ServerConfigSchema,
        { file: 'servers/s.yaml' },
      ),
    );
    expect(server.problems.map((problem) => [problem.path, problem.message])).toEqual([
      ['args', 'expected array, got string "/x"'],
      ['timeouts.startupMs', 'expected number, got string "fast"'],
    ]);
    const actor = problemsOf(() => parseYaml('skills: files\n', ActorSchema));
    expect(actor.problems[0]?.message).toBe('expected array, got string "files"');
    expect(actor.error.message).not.toContain('missing');
  });

  it('reports a wrong type deep in a list at the offending node', () => {
    const { problems } = problemsOf(() =>
      parseYaml('tools:\n  - read_file\n  - 42\n', SkillSchema, { file: 'skills/s.yaml' }),
    );
    expect(problems[0]).toMatchObject({ path: 'tools[1]', line: 3, column: 5 });
    expect(problems[0]?.message).toMatch(/expected string/i);
  });

  it("checks an actor's policy block with the policy schema, pointing at the typo", () => {
    const typo = problemsOf(() =>
      parseYaml(
        'skills: [files]\npolicy:\n  mode: ask\n  rules:\n    - match: { tool: "mcp:fs/*" }\n      decison: deny\n',
        ActorSchema,
        { file: 'actors/coder.yaml' },
      ),
    );
    expect(typo.error.code).toBe('CONFIG_INVALID');
    // The unknown key, and the required field it was meant to be, each with its position.
    expect(typo.error.message).toContain(
      'actors/coder.yaml:6:7: policy.rules[0]: unknown field "decison" (did you mean "decision"?)',
    );
    // An optional field, at the top: no missing-field error to hint at it, the schema does.
    const top = problemsOf(() => parseYaml('skills: [files]\nmaxTurnz: 3\n', ActorSchema));
    expect(top.problems[0]?.message).toBe('unknown field "maxTurnz" (did you mean "maxTurns"?)');
    // Nothing close: the fields allowed there are listed instead.
    const far = problemsOf(() =>
      parseYaml(
        'a: 1\nzzzzzz: 2\n',
        z.object({ a: z.number(), b: z.string().optional() }).strict(),
      ),
    );
    expect(far.problems[0]?.message).toBe('unknown field "zzzzzz" (allowed here: a, b)');
    expect(typo.problems).toContainEqual(
      expect.objectContaining({ path: 'policy.rules[0].decision', line: 5, column: 7 }),
    );
    const mode = problemsOf(() =>
      parseYaml('skills: [files]\npolicy: { mode: aks }\n', ActorSchema, { file: 'a.yaml' }),
    );
    expect(mode.problems).toEqual([
      expect.objectContaining({ path: 'policy.mode', line: 2, column: 17 }),
    ]);
    expect(mode.problems[0]?.message).toMatch(/read-only.*ask.*auto/);
    const parsed = parseYaml('skills: [files]\npolicy: { mode: auto }\n', ActorSchema);
    expect(parsed.policy).toMatchObject({ mode: 'auto', rules: [], newTools: 'ask' });
    expect(parseYaml('skills: [files]\n', ActorSchema).policy).toBeUndefined();
  });

  it('rejects duplicate keys and an empty document', () => {
    expect(problemsOf(() => parseYaml('a: 1\na: 2\n', z.object({}))).problems[0]?.line).toBe(2);
    const empty = problemsOf(() => parseYaml('', ActorSchema, { file: 'e.yaml' }));
    expect(empty.problems[0]?.message).toMatch(/expected object/);
  });
});

describe('loadYamlFile', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('loads a file and names the file on failure; a missing file is CONFIG_NOT_FOUND', async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-load-'));
    const good = join(dir, 'good.yaml');
    await writeFile(good, 'skills: [coding]\n');
    await expect(loadYamlFile(good, ActorSchema)).resolves.toMatchObject({ skills: ['coding'] });
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'skills: [coding]\nmodle: x\n');
    await expect(loadYamlFile(bad, ActorSchema)).rejects.toThrow(`${bad}:2:1:`);
    await expect(loadYamlFile(join(dir, 'none.yaml'), ActorSchema)).rejects.toMatchObject({
      code: 'CONFIG_NOT_FOUND',
    });
  });
});

describe('configJsonSchemas', () => {
  it('generates a JSON Schema per file kind that forbids unknown fields', () => {
    const schemas = configJsonSchemas();
    expect(Object.keys(schemas).sort()).toEqual(['actor', 'server', 'skill', 'tool']);
    expect(schemas.actor['additionalProperties']).toBe(false);
    expect(schemas.actor['required']).toEqual(['skills']);
    expect(JSON.stringify(schemas.server)).toContain('streamable-http');
  });

  it('describes the actor policy field by field, so editors complete and check it', () => {
    const policy = (
      configJsonSchemas().actor['properties'] as Record<string, Record<string, unknown>>
    )['policy'];
    expect(policy?.['additionalProperties']).toBe(false);
    const fields = policy?.['properties'] as Record<string, Record<string, unknown>>;
    expect(Object.keys(fields).sort()).toEqual([
      'clientRequests',
      'mode',
      'network',
      'newTools',
      'rules',
      'skills',
      'tools',
    ]);
    expect(fields['mode']?.['enum']).toEqual(['read-only', 'ask', 'auto']);
  });

  it('matches the committed schemas/*.json (regenerate with npx tsx scripts/gen-schemas.ts)', async () => {
    const schemas = configJsonSchemas();
    for (const kind of ['actor', 'server', 'skill', 'tool'] as const) {
      const file = join(import.meta.dirname, '..', '..', 'schemas', `${kind}.schema.json`);
      expect(JSON.parse(await readFile(file, 'utf8')), file).toEqual(schemas[kind]);
    }
  });
});
