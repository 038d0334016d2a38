import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgentSkillTool, createSkillActivation } from '../../src/skills/skill-activation.js';
import {
  createAllowedToolsMiddleware,
  isToolAllowed,
} from '../../src/skills/skill-allowed-tools.js';
import { loadAgentSkills } from '../../src/skills/agent-skills.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import { createLocalDescriptor } from '../../src/skills/local-descriptor.js';

const SKILLS = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'skills');

function textOf(result: { content: unknown[] }): string {
  return result.content.map((block) => (block as { text?: string }).text ?? '').join('');
}

describe('loadAgentSkills', () => {
  it('loads SKILL.md folders, warns on spec violations and skips unusable ones', async () => {
    const warnings: string[] = [];
    const { skills } = await loadAgentSkills([SKILLS], {
      onSkillWarning: (w) => warnings.push(w.message),
    });
    expect(skills.map((skill) => skill.name).sort()).toEqual(['Bad_Name', 'git-helper']);
    const git = skills.find((skill) => skill.name === 'git-helper');
    expect(git).toMatchObject({
      description: 'Summarise changes in a repository. Use when the user asks what changed.',
      allowedTools: ['read_file', 'list_directory'],
      license: 'MIT',
      metadata: { version: '1' },
      files: ['references/style.md'],
    });
    expect(git?.instructions).toMatch(/^# Git helper/);
    expect(warnings.some((w) => w.includes('name "Bad_Name" breaks the spec'))).toBe(true);
    expect(warnings.some((w) => w.includes('does not match its folder "bad-name-folder"'))).toBe(
      true,
    );
    expect(warnings.some((w) => w.includes('unknown front matter field "extra"'))).toBe(true);
    expect(warnings.some((w) => w.includes('"description" is missing'))).toBe(true);
    expect(warnings.some((w) => w.includes('not valid YAML'))).toBe(true);
  });

  it('loads one skill folder directly and warns about a missing folder', async () => {
    const { skills, warnings } = await loadAgentSkills([
      join(SKILLS, 'git-helper'),
      join(SKILLS, 'nope'),
    ]);
    expect(skills.map((skill) => skill.name)).toEqual(['git-helper']);
    expect(warnings[0]?.message).toMatch(/does not exist/);
  });
});

describe('activate_skill tool and allowed-tools', () => {
  it('lists skills by enum, returns instructions and files, reads files only inside the skill', async () => {
    const { skills } = await loadAgentSkills([join(SKILLS, 'git-helper')]);
    const activation = createSkillActivation();
    const tool = createAgentSkillTool(skills, activation);
    if (!tool) throw new Error('expected a tool');
    expect(tool.descriptor).toMatchObject({
      id: 'skill:activate',
      name: 'activate_skill',
      source: 'agent-skill',
    });
    expect(tool.descriptor.inputSchema).toMatchObject({
      properties: { skill: { enum: ['git-helper'] } },
    });
    expect(tool.descriptor.description).toContain('- git-helper: Summarise changes');

    const result = await tool.execute({ skill: 'git-helper' }, { threadId: 't1' });
    expect(textOf(result)).toContain('<skill name="git-helper">');
    expect(textOf(result)).toContain('- references/style.md');
    expect(activation.get('t1')?.name).toBe('git-helper');
    expect(activation.get('t2')).toBeUndefined();

    const again = await tool.execute({ skill: 'git-helper' }, { threadId: 't1' });
    expect(textOf(again)).toMatch(/already active/);
    const file = await tool.execute({ skill: 'git-helper', file: 'references/style.md' }, {});
    expect(textOf(file)).toBe('Use short summaries.\n');
    const escape = await tool.execute(
      { skill: 'git-helper', file: '../bad-name-folder/SKILL.md' },
      {},
    );
    expect(escape.isError).toBe(true);
    const unknown = await tool.execute({ skill: 'nope' }, {});
    expect(unknown.isError).toBe(true);
  });

  it('denies tools outside allowed-tools while the skill is active, per thread', async () => {
    const { skills } = await loadAgentSkills([join(SKILLS, 'git-helper')]);
    const activation = createSkillActivation();
    const handler = composeMiddleware([createAllowedToolsMiddleware(activation)], async () => ({
      content: [{ type: 'text', text: 'ran' }],
    }));
    const descriptor = (name: string) =>
      createLocalDescriptor({
        id: `builtin:${name}`,
        name,
        source: 'builtin',
        description: '',
        inputSchema: { type: 'object' },
        capabilities: { readOnly: false },
      });
    const write = descriptor('write_file');
    expect(textOf(await handler({ descriptor: write, args: {}, context: { threadId: 'a' } }))).toBe(
      'ran',
    );
    activation.set('a', skills[0]!);
    const denied = await handler({ descriptor: write, args: {}, context: { threadId: 'a' } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('not allowed while skill "git-helper" is active');
    expect(denied._meta?.['agents/policy']).toMatchObject({
      decision: 'deny',
      rule: 'allowed-tools',
    });
    expect(
      textOf(
        await handler({
          descriptor: descriptor('read_file'),
          args: {},
          context: { threadId: 'a' },
        }),
      ),
    ).toBe('ran');
    expect(textOf(await handler({ descriptor: write, args: {}, context: { threadId: 'b' } }))).toBe(
      'ran',
    );
  });

  it('matches allowed-tools entries by name, id, wildcard and argument pattern', () => {
    const descriptor = createLocalDescriptor({
      id: 'mcp:git/git_status',
      name: 'git_status',
      source: 'custom',
      description: '',
      inputSchema: { type: 'object' },
      capabilities: { readOnly: true },
    });
    expect(isToolAllowed(descriptor, ['GIT_STATUS'])).toBe(true);
    expect(isToolAllowed(descriptor, ['mcp:git/*'])).toBe(true);
    expect(isToolAllowed(descriptor, ['git_status(--short)'])).toBe(true);
    expect(isToolAllowed(descriptor, ['git', 'Read'])).toBe(false);
  });
});
