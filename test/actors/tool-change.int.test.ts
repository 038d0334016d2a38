import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StructuredTool } from '@langchain/core/tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import type { ActorInstance } from '../../src/actors/actor-types.js';
import { createScriptedModel } from '../../src/actors/scripted-model.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';
import { createServerManager, type ServerManager } from '../../src/servers/server-manager.js';
import type { ToolsChangedEvent } from '../../src/servers/server-events.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';
import { FAULT_SERVER, groupGone, toolEntry, waitFor } from '../servers/fixture.js';

/** The descriptor behind a tool the actor hands to its graph (our StructuredTool keeps it). */
function descriptorOf(tool: StructuredTool): ToolDescriptor {
  const descriptor = (tool as { descriptor?: ToolDescriptor }).descriptor;
  if (!descriptor) throw new Error(`tool ${tool.name} has no descriptor`);
  return descriptor;
}

async function runEnds(actor: ActorInstance, input: string): Promise<string[]> {
  const ends: string[] = [];
  for await (const event of actor.run(input)) {
    if (event.type === 'tool-call-end') ends.push(`${event.name}:${event.isError}:${event.text}`);
  }
  // The calls of one turn run as parallel tasks: their ends may come in any order.
  return ends.sort();
}

describe('a tool whose definition changes at run time (tools/list_changed), seen by an actor', () => {
  let dir: string;
  let store: WorkspaceStore;
  let manager: ServerManager;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-tool-change-')));
    store = createWorkspaceStore(join(dir, '.agents'));
    manager = createServerManager({ refreshDebounceMs: 50, runDir: null });
  });
  afterEach(async () => {
    await manager.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is flagged and re-inferred but never upgraded to read-only: a read-only graph run still refuses it', async () => {
    // Trusted, so readOnlyHint alone would make a tool read-only: the upgrade is what is at stake.
    await store.put('server', 'dyn', {
      transport: 'stdio',
      command: process.execPath,
      args: [FAULT_SERVER, 'list-changed'],
      trusted: true,
    });
    await store.put('skill', 'dyn', { mcpServers: ['dyn'] });
    // The same turn for every run: call widget (no read evidence) and fresh_reader (added later).
    await writeFile(
      join(dir, 'script.yaml'),
      ['- tool_calls: [{ name: widget }, { name: fresh_reader }]', '- content: done'].join('\n'),
    );
    const model = await createScriptedModel({ file: join(dir, 'script.yaml') });
    const bindings: StructuredTool[][] = [];
    const bindTools = model.bindTools.bind(model);
    model.bindTools = (tools, kwargs) => {
      bindings.push(tools.filter((tool): tool is StructuredTool => 'descriptor' in tool));
      return bindTools(tools, kwargs);
    };
    await using actor = await createActor({
      model,
      serverManager: manager,
      config: {
        name: 'reader',
        skills: ['dyn'],
        model: 'scripted:script.yaml',
        sandbox: { enabled: false },
        policy: { mode: 'read-only' },
        checkpointer: { type: 'memory' },
      },
      workspace: store,
    });
    await actor.activate();
    const server = manager.get('dyn')!;
    const widgetBefore = actor.entries().find((entry) => entry.descriptor.id === 'mcp:dyn/widget')!;
    expect(widgetBefore.descriptor.capabilities.readOnly).toMatchObject({
      value: false,
      source: 'default',
    });

    // Run 1: widget may write, so read-only mode refuses it; fresh_reader does not exist yet.
    const first = await runEnds(actor, 'go');
    expect(first).toHaveLength(2);
    expect(first[0]).toMatch(/^fresh_reader:true:/);
    expect(first[1]).toMatch(/^widget:true:.*read-only/);

    // The server changes widget (new description, new schema, now claims readOnlyHint) and adds
    // fresh_reader with the same claim; the changes reach the actor through list_changed only.
    const events: ToolsChangedEvent[] = [];
    manager.on('tools-changed', (event) => events.push(event));
    let actorChanges = 0;
    actor.onToolsChanged(() => actorChanges++);
    await toolEntry(server, 'change_tool').execute(
      { name: 'widget', description: 'Only looks at things', readOnly: true, param: 'topic' },
      {},
    );
    await toolEntry(server, 'add_tool').execute({ name: 'fresh_reader', readOnly: true }, {});
    await waitFor(
      () =>
        events.some((event) => event.changed.includes('mcp:dyn/widget')) &&
        events.some((event) => event.added.includes('mcp:dyn/fresh_reader')),
      10_000,
      'the refresh after list_changed',
    );
    expect(events.every((event) => event.reason === 'list_changed')).toBe(true);
    expect(actorChanges).toBeGreaterThan(0);
    expect(server.changedToolIds.has('mcp:dyn/widget')).toBe(true);

    // The actor's registry: the new definition, capabilities inferred again (they now say
    // read-only) but the read-only verdict withheld.
    const widget = actor.entries().find((entry) => entry.descriptor.id === 'mcp:dyn/widget')!;
    expect(widget.descriptor.description).toContain('Only looks at things');
    expect(widget.descriptor.fingerprint).not.toBe(widgetBefore.descriptor.fingerprint);
    expect(widget.descriptor.capabilities.readOnly.value).toBe(false);
    expect(widget.descriptor.capabilities.writes.value).toBe(true);
    expect(widget.descriptor.capabilities.readOnly.reason).toContain('withheld');
    expect(widget.descriptor.capabilities.disagreements).toContain(
      'read-only upgrade after a definition change was withheld',
    );
    // A tool that arrives with the same claim is read-only: only the change is held back.
    const fresh = actor.entries().find((entry) => entry.descriptor.id === 'mcp:dyn/fresh_reader')!;
    expect(fresh.descriptor.capabilities.readOnly).toMatchObject({
      value: true,
      source: 'annotation',
    });

    // The tools the graph hands out carry the same descriptors.
    const widgetTool = actor.tools().find((tool) => tool.name === 'widget')!;
    expect(widgetTool.description).toContain('Only looks at things');
    expect(descriptorOf(widgetTool).capabilities.readOnly.value).toBe(false);

    // Run 2, a real graph run: the model is bound with the new definitions; widget is still
    // refused by read-only mode while fresh_reader runs.
    const second = await runEnds(actor, 'go again');
    expect(second).toHaveLength(2);
    expect(second[0]).toBe('fresh_reader:false:fresh_reader ran');
    expect(second[1]).toMatch(/^widget:true:.*read-only/);
    expect(bindings).toHaveLength(2);
    const boundWidget = bindings[1]!.find((tool) => tool.name === 'widget')!;
    expect(boundWidget.description).toContain('Only looks at things');
    expect(Object.keys(descriptorOf(boundWidget).inputSchema.properties as object)).toEqual([
      'topic',
    ]);
    expect(descriptorOf(boundWidget).capabilities.readOnly.value).toBe(false);
    expect(bindings[1]!.map((tool) => tool.name)).toContain('fresh_reader');
    expect(bindings[0]!.map((tool) => tool.name)).not.toContain('fresh_reader');

    const pid = server.pid;
    await actor.deactivate();
    expect(manager.get('dyn')).toBeUndefined();
    expect(groupGone(pid)).toBe(true);
  });
});
