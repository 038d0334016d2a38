import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planSkills } from '../../src/skills/skill-plan.js';
import { createSkillRegistry } from '../../src/skills/skill-registry.js';
import type { SkillServer } from '../../src/skills/skill-registry.js';
import type { ToolEntry } from '../../src/core/tool-descriptor.js';
import { createToolRegistry } from '../../src/registry/tool-registry.js';
import type { ToolsChangedEvent } from '../../src/servers/server-events.js';
import { createLocalDescriptor } from '../../src/skills/local-descriptor.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'workspace');

function mcpEntry(serverName: string, toolName: string, readOnly = false): ToolEntry {
  const local = createLocalDescriptor({
    id: 'x',
    name: toolName,
    source: 'custom',
    description: `${toolName} on ${serverName}`,
    inputSchema: { type: 'object' },
    capabilities: { readOnly },
  });
  return {
    descriptor: { ...local, id: `mcp:${serverName}/${toolName}`, source: 'mcp', serverName },
    execute: async () => ({ content: [{ type: 'text', text: `${serverName}/${toolName}` }] }),
  };
}

/** A running server stand-in whose tool set can change, like a ManagedServer's. */
function fakeServer(name: string, tools: string[]) {
  let entries = tools.map((tool) => mcpEntry(name, tool));
  const listeners = new Set<(event: ToolsChangedEvent) => void>();
  const server: SkillServer & { setTools(tools: string[]): void } = {
    name,
    entries: () => entries,
    on: (_event, listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    setTools(next) {
      entries = next.map((tool) => mcpEntry(name, tool));
      for (const listener of listeners)
        listener({
          serverName: name,
          reason: 'list_changed',
          added: [],
          removed: [],
          changed: [],
          entries,
        });
    },
  };
  return server;
}

describe('skill registry', () => {
  let dir: string;
  let store: WorkspaceStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-skills-'));
    store = createWorkspaceStore(join(dir, '.agents'), { projectDir: FIXTURES });
    await store.put('server', 'git', { transport: 'stdio', command: 'git-mcp' });
    await store.put('server', 'fs', { transport: 'stdio', command: 'fs-mcp' });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('flattens built-in, custom, MCP, tool-resource and Agent Skill sources into one set', async () => {
    await store.put('tool', 'status', {
      id: 'repo.status',
      server: 'git',
      tool: 'git_status',
      overrides: { name: 'repo_status' },
    });
    await store.put('skill', 'coding', {
      tools: ['read_file', 'custom:./custom/tools.mjs#shout', 'repo.status'],
      mcpServers: ['fs'],
      agentSkills: ['./skills/git-helper'],
      overrides: {
        write_file: { capabilities: { readOnly: true } },
        delete_file: { enabled: false },
      },
    });
    const plan = await planSkills(store, ['coding']);
    expect(plan.servers.map((server) => server.name).sort()).toEqual(['fs', 'git']);
    const servers = new Map([
      ['git', fakeServer('git', ['git_status', 'git_commit'])],
      ['fs', fakeServer('fs', ['read_file', 'write_file', 'delete_file'])],
    ]);
    await using registry = await createSkillRegistry({
      plan,
      servers,
      projectDir: FIXTURES,
      paths: () => ({
        root: dir,
        toSandbox: (path) => join(dir, path),
        fromSandbox: (text) => text,
      }),
    });
    const byId = Object.fromEntries(
      registry.entries().map((entry) => [entry.descriptor.id, entry.descriptor]),
    );
    expect(Object.keys(byId).sort()).toEqual([
      'builtin:read_file',
      'custom:shout',
      'mcp:fs/read_file',
      'mcp:fs/write_file',
      'repo.status',
      'skill:activate',
    ]);
    // Collision rule: the server tool is prefixed, the built-in keeps its name.
    expect(byId['builtin:read_file']?.name).toBe('read_file');
    expect(byId['mcp:fs/read_file']?.name).toBe('fs__read_file');
    // A tool resource resolves to its server tool's descriptor under the resource's id.
    expect(byId['repo.status']).toMatchObject({
      name: 'repo_status',
      serverName: 'git',
      originalName: 'git_status',
    });
    expect(byId['mcp:fs/write_file']?.capabilities.readOnly).toMatchObject({
      value: true,
      source: 'override',
    });
    expect(byId['mcp:fs/write_file']?.capabilities.writes.value).toBe(false);
    expect(byId['custom:shout']).toMatchObject({ source: 'custom' });
    expect(byId['custom:shout']?.capabilities.readOnly.value).toBe(true);
    expect(byId['skill:activate']?.inputSchema).toMatchObject({
      properties: { skill: { enum: ['git-helper'] } },
    });
    const shout = await registry.getByName('shout')!.execute({ text: 'hi' }, {});
    expect(shout.content).toEqual([{ type: 'text', text: 'HI' }]);
    const status = await registry.getByName('repo_status')!.execute({}, {});
    expect(status.content).toEqual([{ type: 'text', text: 'git/git_status' }]);
  });

  it('re-flattens when a server changes its tools and reports what changed', async () => {
    await store.put('skill', 's', { mcpServers: ['fs'] });
    const fs = fakeServer('fs', ['read_file']);
    await using registry = await createSkillRegistry({
      plan: await planSkills(store, ['s']),
      servers: new Map([['fs', fs]]),
      projectDir: dir,
    });
    const events: string[][] = [];
    registry.on('change', (event) =>
      events.push([...event.added, ...event.removed.map((id) => `-${id}`)]),
    );
    fs.setTools(['read_file', 'search']);
    expect(registry.entries().map((entry) => entry.descriptor.name)).toEqual([
      'read_file',
      'search',
    ]);
    expect(events).toEqual([['mcp:fs/search']]);
    fs.setTools(['search']);
    expect(events[1]).toEqual(['-mcp:fs/read_file']);
  });

  it('keeps a tool resource id when the server record is renamed, and includes the tool once', async () => {
    await store.put('tool', 'status', { id: 'repo.status', server: 'git', tool: 'git_status' });
    await store.put('skill', 's', { tools: ['repo.status'], mcpServers: ['git'] });
    await using before = await createSkillRegistry({
      plan: await planSkills(store, ['s']),
      servers: new Map([['git', fakeServer('git', ['git_status', 'git_commit'])]]),
      projectDir: dir,
    });
    // The whole server is included too, but git_status comes once, under the resource id.
    expect(before.entries().map((entry) => entry.descriptor.id)).toEqual([
      'repo.status',
      'mcp:git/git_commit',
    ]);
    expect(before.get('repo.status')?.descriptor.name).toBe('git_status');
    expect(before.get('mcp:git/git_status')).toBeUndefined();

    // Rename the server record: the resource follows it, the id policy and pins use does not.
    await store.put('server', 'vcs', { transport: 'stdio', command: 'git-mcp' });
    await store.put(
      'tool',
      'status',
      { id: 'repo.status', server: 'vcs', tool: 'git_status' },
      { overwrite: true },
    );
    await store.put('skill', 's', { tools: ['repo.status'] }, { overwrite: true });
    await using after = await createSkillRegistry({
      plan: await planSkills(store, ['s']),
      servers: new Map([['vcs', fakeServer('vcs', ['git_status'])]]),
      projectDir: dir,
    });
    expect(after.entries().map((entry) => entry.descriptor.id)).toEqual(['repo.status']);
    const result = await after.get('repo.status')!.execute({}, {});
    expect(result.content).toEqual([{ type: 'text', text: 'vcs/git_status' }]);
  });

  it('writes into a given tool registry as one group, beside other groups', async () => {
    await store.put('skill', 's', { mcpServers: ['fs'] });
    const registry = createToolRegistry();
    registry.replaceGroup('other', [mcpEntry('other', 'ping')]);
    const fs = fakeServer('fs', ['read_file']);
    await using skills = await createSkillRegistry({
      plan: await planSkills(store, ['s']),
      servers: new Map([['fs', fs]]),
      projectDir: dir,
      registry,
      group: 'actor:a',
    });
    expect(registry.groups()).toEqual(['other', 'actor:a']);
    const changes: string[] = [];
    registry.on('change', (change) => changes.push(`${change.groupKey}+${change.added.join()}`));
    fs.setTools(['read_file', 'search']);
    expect(changes).toEqual(['actor:a+mcp:fs/search']);
    expect(skills.getByName('ping')?.descriptor.id).toBe('mcp:other/ping');
    expect(registry.entries('actor:a').map((entry) => entry.descriptor.name)).toEqual([
      'read_file',
      'search',
    ]);
  });

  it('resolves a bare agentSkills name in the workspace Agent Skills folder', async () => {
    const withSkills = createWorkspaceStore(join(dir, '.agents'), {
      projectDir: FIXTURES,
      agentSkillsDir: 'skills',
    });
    await withSkills.put('skill', 'helper', { agentSkills: ['git-helper'] });
    const plan = await planSkills(withSkills, ['helper']);
    expect(plan.inclusions).toEqual([
      { kind: 'agent-skills', skill: 'helper', folders: [join(FIXTURES, 'skills', 'git-helper')] },
    ]);
    await using registry = await createSkillRegistry({
      plan,
      servers: new Map(),
      projectDir: FIXTURES,
    });
    expect(registry.agentSkills.map((skill) => skill.name)).toEqual(['git-helper']);
  });

  describe('resolution errors (ADR-0027 "AEP tool contributions resolve to MCP")', () => {
    it('missing resource: TOOL_NOT_FOUND naming the skill and the id', async () => {
      await store.put('skill', 's', { tools: ['nope.tool'] });
      await expect(planSkills(store, ['s'])).rejects.toMatchObject({
        code: 'TOOL_NOT_FOUND',
        message: expect.stringContaining('Skill "s" lists tool "nope.tool"'),
      });
    });

    it('disabled mapping: TOOL_DISABLED with how to enable it', async () => {
      await store.put('tool', 'st', {
        id: 'repo.status',
        server: 'git',
        tool: 'git_status',
        enabled: false,
      });
      await store.put('skill', 's', { tools: ['repo.status'] }, { overwrite: true });
      await expect(planSkills(store, ['s'])).rejects.toMatchObject({
        code: 'TOOL_DISABLED',
        message: expect.stringContaining('agents tool enable st'),
      });
    });

    it('unknown server record: SERVER_NOT_FOUND; server not running: SERVER_UNAVAILABLE', async () => {
      await store.put('tool', 'x', { id: 'x.y', server: 'ghost', tool: 't' });
      await store.put('skill', 's', { tools: ['x.y'] });
      await expect(planSkills(store, ['s'])).rejects.toMatchObject({
        code: 'SERVER_NOT_FOUND',
        message: expect.stringContaining('server "ghost"'),
      });
      await store.put('skill', 't', { mcpServers: ['git'] });
      const plan = await planSkills(store, ['t']);
      await expect(
        createSkillRegistry({ plan, servers: new Map(), projectDir: dir }),
      ).rejects.toMatchObject({
        code: 'SERVER_UNAVAILABLE',
        message: expect.stringContaining('Server "git"'),
      });
    });

    it('absent tool: TOOL_UNAVAILABLE listing what the server has', async () => {
      await store.put('tool', 'st', { id: 'repo.status', server: 'git', tool: 'git_status' });
      await store.put('skill', 's', { tools: ['repo.status'] }, { overwrite: true });
      const plan = await planSkills(store, ['s']);
      await expect(
        createSkillRegistry({
          plan,
          servers: new Map([['git', fakeServer('git', ['git_log'])]]),
          projectDir: dir,
        }),
      ).rejects.toMatchObject({
        code: 'TOOL_UNAVAILABLE',
        message: expect.stringContaining('it has: git_log'),
      });
    });

    it('missing skill: SKILL_NOT_FOUND; duplicate override names: TOOL_NAME_COLLISION', async () => {
      await expect(planSkills(store, ['ghost'])).rejects.toMatchObject({ code: 'SKILL_NOT_FOUND' });
      await store.put('skill', 's', {
        mcpServers: ['fs'],
        overrides: { a: { name: 'same' }, b: { name: 'same' } },
      });
      const plan = await planSkills(store, ['s']);
      await expect(
        createSkillRegistry({
          plan,
          servers: new Map([['fs', fakeServer('fs', ['a', 'b'])]]),
          projectDir: dir,
        }),
      ).rejects.toMatchObject({ code: 'TOOL_NAME_COLLISION' });
    });
  });
});
