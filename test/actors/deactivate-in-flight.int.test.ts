import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import { readAuditLog } from '../../src/policy/audit-log.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';
import { FIXTURE_SERVER_PATH, TSX_LOADER } from '../fixtures/fixture-process.js';

describe('deactivating an actor while a tool call runs', () => {
  let dir: string;
  let store: WorkspaceStore;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-inflight-')));
    store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'fx', {
      transport: 'stdio',
      command: process.execPath,
      args: ['--import', TSX_LOADER, FIXTURE_SERVER_PATH, '--transport', 'stdio'],
    });
    await store.put('skill', 'fx', { mcpServers: ['fx'] });
    await store.put('actor', 'waiter', {
      skills: ['fx'],
      model: 'scripted:none.yaml',
      policy: { mode: 'auto' },
      sandbox: { enabled: false },
      checkpointer: { type: 'memory' },
    });
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('ends the call (server stopped), writes its complete audit entry, then closes the log', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(`${warning.name}: ${warning.message}`);
    };
    process.on('warning', onWarning);
    try {
      const actor = await createActor({ name: 'waiter', workspace: store });
      await actor.activate();
      const slow = actor.tools().find((tool) => tool.name === 'slow');
      expect(slow).toBeDefined();
      const call = slow!
        .invoke({ ms: 60_000 }, {
          configurable: { thread_id: 'inflight-1' },
          toolCall: undefined,
        } as never)
        .then(
          (value: unknown) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
      // Started: its start entry is on disk before the tool runs.
      for (let tries = 0; tries < 200; tries++) {
        const { entries } = await readAuditLog(actor.auditFile, { raw: true });
        if (entries.some((entry) => entry.event === 'tool-call-start')) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await actor.deactivate();
      await call;
      const { entries } = await readAuditLog(actor.auditFile, { raw: true });
      const start = entries.find((entry) => entry.event === 'tool-call-start');
      const end = entries.find((entry) => entry.event === 'tool-call');
      expect(start?.toolName).toBe('slow');
      expect(end).toMatchObject({ toolName: 'slow', callId: start?.callId, isError: true });
      // Nothing was left for a closed log.
      expect(warnings.filter((warning) => warning.includes('AgentsAuditWarning'))).toEqual([]);
      expect((await readAuditLog(actor.auditFile)).entries.map((entry) => entry.event)).toEqual([
        'tool-call',
      ]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
