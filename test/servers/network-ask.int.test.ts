/**
 * Issue 28, "ask, don't just deny": a confined server connects to a host on none of its lists;
 * the policy's `network` rule says ask. The proxy refuses, the call's result says so, the run
 * pauses with the question (exit 8 with --no-prompt); answered from a new process with
 * `agents actor resume --approve`, the host is pinned and the call runs again and connects;
 * answered with --reject, the refusal stands. Both answers are audited. Loopback only: the
 * hosts are IP literals on 127.0.0.x (a rule naming them may open them).
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/policy/audit-entry.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents, agentsProcess, makeProjectRepo } from '../cli/helpers.js';

const SERVER = join(import.meta.dirname, '..', 'fixtures', 'network-server.mjs');
const BUBBLEWRAP = probeBubblewrap({ network: false });
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

async function listen(host: string, hits: string[]): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end(`hello from ${host}`);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe.runIf(BUBBLEWRAP.available || MUST_CONFINE)(
  'network approval (policy network: ask)',
  () => {
    let dir: string;
    const askedHits: string[] = [];
    const refusedHits: string[] = [];
    let asked: Awaited<ReturnType<typeof listen>>;
    let refused: Awaited<ReturnType<typeof listen>>;

    beforeAll(async () => {
      asked = await listen('127.0.0.2', askedHits);
      refused = await listen('127.0.0.3', refusedHits);
      dir = await makeProjectRepo('agents-network-ask-');
      const store = createWorkspaceStore(join(dir, '.agents'));
      await store.put('server', 'fetcher', {
        transport: 'stdio',
        command: process.execPath,
        args: [SERVER],
        network: { allow: ['*.example.test'] },
      });
      await store.put('skill', 'net', { mcpServers: ['fetcher'] });
      for (const [name, target] of [
        ['asker', `http://127.0.0.2:${asked.port}/asked`],
        ['refuser', `http://127.0.0.3:${refused.port}/refused`],
      ] as const) {
        await writeFile(
          join(dir, `${name}.json`),
          JSON.stringify([
            { tool_calls: [{ name: 'probe', args: { how: 'proxy-http', target }, id: 'probe_0' }] },
            { content: 'done' },
          ]),
        );
        await store.put('actor', name, {
          skills: ['net'],
          model: `scripted:${name}.json`,
          policy: {
            mode: 'auto',
            network: [
              { host: '*', decision: 'ask', reason: 'hosts off the lists need a human' },
              { host: '127.0.0.9', decision: 'deny' },
            ],
          },
          sandbox: { enabled: false, confine: 'required' },
        });
      }
    }, 60_000);

    afterAll(async () => {
      asked?.server.close();
      refused?.server.close();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    async function auditEntries(): Promise<AuditEntry[]> {
      const text = await readFile(join(dir, '.agents', 'audit.jsonl'), 'utf8');
      return text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as AuditEntry)
        .filter((entry) => entry.event === 'network');
    }

    it(
      'pauses (exit 8), and an approval from a new process pins the host and runs the call again: it connects',
      { timeout: 120_000 },
      async () => {
        const paused = await agents(
          dir,
          'actor',
          'run',
          'asker',
          '--input',
          'go',
          '--thread',
          'ask-1',
          '--no-prompt',
        );
        expect(paused.code, paused.stdout + paused.stderr).toBe(8);
        expect(`${paused.stdout}${paused.stderr}`).toContain(
          'agents actor resume asker --thread ask-1 --approve',
        );
        expect(askedHits).toEqual([]);
        const host = `127.0.0.2:${asked.port}`;
        let audit = await auditEntries();
        expect(
          audit.map((entry) => [entry.toolCallId, entry.network!.during, entry.network!.approval]),
        ).toEqual([[undefined, ['probe_0'], 'needed']]);
        expect(audit[0]!.network!.reason).toMatch(
          new RegExp(`network approval needed for ${host.replace(/\./g, '\\.')}`),
        );

        const resumed = await agentsProcess(dir, [
          'actor',
          'resume',
          'asker',
          '--thread',
          'ask-1',
          '--approve',
          '--by',
          'tester',
          '--no-prompt',
        ]);
        expect(resumed.code, resumed.stderr).toBe(0);
        // The question names the call as the one in flight, not as the one that connected.
        expect(resumed.stdout).toMatch(
          /refused during call probe_0 \(probe\); the proxy sees the server, not which of its processes connected/,
        );
        expect(resumed.stdout).toContain('OK 200 hello from 127.0.0.2');
        // Reached once: the refused replay on resume never connected.
        expect(askedHits).toEqual(['/asked']);
        const pins = JSON.parse(await readFile(join(dir, '.agents', 'pins.json'), 'utf8')) as {
          hosts: Record<string, { approvedBy: string }>;
        };
        expect(pins.hosts[`fetcher/${host}`]?.approvedBy).toBe('tester');
        audit = await auditEntries();
        expect(
          audit.map((entry) => [
            entry.network!.protocol,
            entry.network!.decision,
            entry.network!.approval,
          ]),
        ).toEqual([
          ['http', 'deny', 'needed'],
          ['http', 'deny', 'needed'], // the call's replay on resume, before the answer
          ['approval', 'allow', 'approved'],
          ['http', 'allow', undefined],
        ]);
        expect(audit[2]!.network!.reason).toBe('approved by tester; pinned for server "fetcher"');
        expect(audit[3]!.network!.rule).toMatch(/approved by tester/);
        // Refusals and connections are filed under the server, during the call; the human's
        // answer to that call's question is the call's own.
        expect(audit.map((entry) => entry.toolCallId)).toEqual([
          undefined,
          undefined,
          'probe_0',
          undefined,
        ]);
        expect(audit.every((entry) => entry.network!.during?.join() === 'probe_0')).toBe(true);
      },
    );

    it(
      'a rejection keeps the refusal: the host is never reached, the answer is audited, nothing is pinned',
      { timeout: 120_000 },
      async () => {
        const before = (await auditEntries()).length;
        const paused = await agents(
          dir,
          'actor',
          'run',
          'refuser',
          '--input',
          'go',
          '--thread',
          'ask-2',
          '--no-prompt',
        );
        expect(paused.code, paused.stdout + paused.stderr).toBe(8);
        const answered = await agents(
          dir,
          'actor',
          'resume',
          'refuser',
          '--thread',
          'ask-2',
          '--reject',
          'no exfiltration',
          '--by',
          'tester',
          '--no-prompt',
        );
        expect(answered.code, answered.stderr).toBe(0);
        expect(answered.stdout).toContain('The user refused network access to 127.0.0.3');
        expect(refusedHits).toEqual([]);
        const audit = (await auditEntries()).slice(before);
        expect(audit.map((entry) => [entry.network!.decision, entry.network!.approval])).toEqual([
          ['deny', 'needed'],
          ['deny', 'needed'],
          ['deny', 'rejected'],
        ]);
        expect(audit[2]!.network!.reason).toBe('rejected by tester: no exfiltration');
        const pins = JSON.parse(await readFile(join(dir, '.agents', 'pins.json'), 'utf8')) as {
          hosts: Record<string, unknown>;
        };
        expect(Object.keys(pins.hosts).some((key) => key.includes('127.0.0.3'))).toBe(false);
      },
    );
  },
);
