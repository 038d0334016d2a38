/**
 * Key naming: YAML keys are camelCase (`mcpServers`, `agentSkills`, like the TypeScript option
 * names); the old snake_case skill keys still load with a deprecation warning (file, line, new
 * key; once per key and file), both spellings at once are an error, and files the store writes
 * use the new keys. A JSON Schema-driven editor sees the old keys as deprecated, not unknown.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { configJsonSchemas } from '../../src/config/json-schema.js';
import { parseYaml, type ConfigProblem } from '../../src/config/load.js';
import { SkillSchema } from '../../src/config/skill-schema.js';
import { AgentsError } from '../../src/errors.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';

const OLD_SKILL = [
  'description: Edit files.',
  'mcp_servers:',
  '  - fs',
  'agent_skills: [release-notes]',
  '',
].join('\n');

describe('deprecated snake_case skill keys', () => {
  it('load under the new names, with one warning per key naming the file, line and new key', () => {
    const warnings: string[] = [];
    const file = `skills/old-${Math.random()}.yaml`;
    const skill = parseYaml(OLD_SKILL, SkillSchema, {
      file,
      onWarning: (message) => warnings.push(message),
    });
    expect(skill.mcpServers).toEqual(['fs']);
    expect(skill.agentSkills).toEqual(['release-notes']);
    expect(Object.keys(skill)).not.toContain('mcp_servers');
    expect(warnings).toEqual([
      `${file}:2: "mcp_servers" is deprecated; rename it to "mcpServers" (same value). The old spelling still works for now.`,
      `${file}:4: "agent_skills" is deprecated; rename it to "agentSkills" (same value). The old spelling still works for now.`,
    ]);
    // Read again (a CLI run reads a file several times): no second warning for that file.
    parseYaml(OLD_SKILL, SkillSchema, { file, onWarning: (message) => warnings.push(message) });
    expect(warnings).toHaveLength(2);
    // Another file with the old keys gets its own warnings.
    parseYaml(OLD_SKILL, SkillSchema, {
      file: `${file}.other`,
      onWarning: (message) => warnings.push(message),
    });
    expect(warnings).toHaveLength(4);
  });

  it('warn through process warnings (DeprecationWarning) when no handler is given', async () => {
    const seen: Error[] = [];
    const listener = (warning: Error): void => void seen.push(warning);
    process.on('warning', listener);
    try {
      const file = `skills/emitted-${Math.random()}.yaml`;
      parseYaml('mcp_servers: [fs]\n', SkillSchema, { file });
      await new Promise((resolve) => setImmediate(resolve));
      const ours = seen.filter((warning) => warning.message.includes(file));
      expect(ours).toHaveLength(1);
      expect(ours[0]!.name).toBe('DeprecationWarning');
      expect((ours[0] as Error & { code?: string }).code).toBe('AGENTS_DEPRECATED_KEY');
      expect(ours[0]!.message).toContain(`${file}:1: "mcp_servers" is deprecated`);
    } finally {
      process.off('warning', listener);
    }
  });

  it('reject both spellings of one key, at the old key, saying which to keep', () => {
    let caught: unknown;
    try {
      parseYaml('mcpServers: [a]\ndescription: x\nmcp_servers: [b]\n', SkillSchema, {
        file: 'skills/both.yaml',
        onWarning: () => undefined,
      });
    } catch (error) {
      caught = error;
    }
    expect(AgentsError.isInstance(caught)).toBe(true);
    const error = caught as AgentsError;
    expect(error.code).toBe('CONFIG_INVALID');
    const problems = error.details['problems'] as ConfigProblem[];
    expect(problems).toEqual([
      expect.objectContaining({ path: 'mcp_servers', line: 3, column: 1 }),
    ]);
    expect(error.message).toContain(
      'skills/both.yaml:3:1: mcp_servers: both "mcp_servers" (the deprecated spelling) and "mcpServers" are set; keep only "mcpServers"',
    );
  });

  it('point at the old key when a value under it is wrong', () => {
    let caught: unknown;
    try {
      parseYaml('description: x\nagent_skills: notalist\n', SkillSchema, {
        file: 'skills/typed.yaml',
        onWarning: () => undefined,
      });
    } catch (error) {
      caught = error;
    }
    const problems = (caught as AgentsError).details['problems'] as ConfigProblem[];
    expect(problems).toEqual([expect.objectContaining({ path: 'agent_skills', line: 2 })]);
  });

  it('are accepted from code too (SkillSchema), and both spellings are an error there as well', () => {
    expect(SkillSchema.parse({ mcp_servers: ['fs'] }).mcpServers).toEqual(['fs']);
    const result = SkillSchema.safeParse({ mcp_servers: ['fs'], mcpServers: ['git'] });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({
        path: ['mcp_servers'],
        message: expect.stringContaining('keep only "mcpServers"'),
      }),
    ]);
  });

  it('are never written: the store writes camelCase keys (and keeps the $schema line)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'agents-aliases-'));
    cleanup.push(root);
    const store = createWorkspaceStore(join(root, '.agents'));
    const target = await store.put('skill', 'files', {
      description: 'Edit files.',
      mcp_servers: ['fs'],
      agent_skills: ['notes'],
    } as never);
    const text = await readFile(target, 'utf8');
    expect(text.split('\n')[0]).toMatch(/^# yaml-language-server: \$schema=.*skill\.schema\.json$/);
    expect(text).toContain('mcpServers:');
    expect(text).toContain('agentSkills:');
    expect(text).not.toMatch(/mcp_servers|agent_skills/);
    expect((await store.get('skill', 'files')).mcpServers).toEqual(['fs']);
  });

  it('are deprecated properties in the JSON Schema: an editor accepts them and flags them', () => {
    const schema = configJsonSchemas().skill;
    const properties = schema['properties'] as Record<string, Record<string, unknown>>;
    expect(properties['mcp_servers']).toMatchObject({
      $ref: '#/properties/mcpServers',
      deprecated: true,
    });
    const ajv = new Ajv2020({ strict: false, logger: false });
    const validate = ajv.compile(schema);
    expect(validate({ mcp_servers: ['fs'], agent_skills: ['x'] })).toBe(true);
    expect(validate({ mcpServers: ['fs'] })).toBe(true);
    expect(validate({ mcp_servers: 'fs' })).toBe(false);
    expect(validate({ mcp_serverz: ['fs'] })).toBe(false);
  });
});

const cleanup: string[] = [];
afterEach(async () => {
  for (const dir of cleanup.splice(0)) await rm(dir, { recursive: true, force: true });
});
