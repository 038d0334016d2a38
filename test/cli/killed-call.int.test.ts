import { access, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findThreadSandboxes } from '../../src/actors/thread-sandbox.js';
import { UNATTRIBUTED_TOOL_ID } from '../../src/thread/unattributed-id.js';
import {
  addFixtureFilesSkill,
  addScriptedActors,
  agents,
  agentsProcess,
  makeProjectRepo,
} from './helpers.js';

const THREAD = 'killed-1';

interface AuditJson {
  event: string;
  toolId: string;
  toolName: string;
  callId?: string;
  snapshot?: string;
  changed?: number;
}

async function sandboxTree(dir: string): Promise<string | undefined> {
  const location = (await findThreadSandboxes(join(dir, '.agents'), THREAD))[0];
  if (location === undefined) return undefined;
  try {
    const marker = JSON.parse(
      await readFile(join(location.sandboxDir, 'run', 'sandbox.json'), 'utf8'),
    ) as { root: string };
    return marker.root;
  } catch {
    return undefined;
  }
}

describe('a tool call killed mid-way (SIGKILL of agents actor run)', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await makeProjectRepo('agents-killed-call-');
    await addFixtureFilesSkill(dir);
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }]',
        '- tool_calls: [{ name: write_then_wait, args: { path: killed.txt, content: "K", ms: 120000 } }]',
        '- content: done',
      ],
      { mode: 'auto' },
    );
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'records the killed call in the audit log and discards its partial write on reopen, on this worker as on any other (#38)',
    { timeout: 240_000 },
    async () => {
      let killed = false;
      let polling: NodeJS.Timeout | undefined;
      const run = await agentsProcess(
        dir,
        ['actor', 'run', 'bot', '--input', 'go', '--thread', THREAD],
        (stdout, child) => {
          if (polling !== undefined || !stdout.includes('write_then_wait')) return;
          // Kill once the server has written the file, while the call still waits.
          polling = setInterval(() => {
            void sandboxTree(dir).then(async (tree) => {
              if (killed || tree === undefined) return;
              const written = await access(join(tree, 'killed.txt')).then(
                () => true,
                () => false,
              );
              if (!written) return;
              killed = true;
              clearInterval(polling);
              child.kill('SIGKILL');
            });
          }, 50);
        },
      );
      clearInterval(polling);
      expect(killed, run.stdout + run.stderr).toBe(true);
      expect(run.code).toBeNull();

      // Killed: the call has a start entry and no end.
      const auditAfterKill = (await agents(dir, 'audit', '--thread', THREAD, '--json')).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as AuditJson);
      expect(auditAfterKill.map((entry) => [entry.event, entry.toolName])).toEqual([
        ['tool-call', 'write_file'],
        ['tool-call-start', 'write_then_wait'],
      ]);

      // Reopen: the next run finds killed.txt, left by a call that never completed: it is
      // discarded (kept in a safety snapshot), never recorded as the thread's work, and the new
      // call changes only c.txt.
      await writeFile(
        join(dir, 'script.yaml'),
        [
          '- tool_calls: [{ name: write_file, args: { path: c.txt, content: "C1" } }]',
          '- content: done',
          '',
        ].join('\n'),
      );
      const again = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'again',
        '--thread',
        THREAD,
        '--json',
      ]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/killed during write_then_wait.*discarded \(kept in snapshot/);
      const ends = again.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; change?: { changed: unknown[] } })
        .filter((event) => event.type === 'tool-call-end');
      expect(
        ends.map((event) => event.change?.changed),
        again.stdout,
      ).toEqual([[{ status: 'A', path: 'c.txt' }]]);

      const checkpoints = JSON.parse(
        (await agents(dir, 'checkpoints', '--thread', THREAD, '--json')).stdout,
      ) as Array<{ records: Array<{ toolId: string; changed: unknown[] }> }>;
      const unattributed = checkpoints.flatMap((entry) =>
        entry.records.filter((record) => record.toolId === UNATTRIBUTED_TOOL_ID),
      );
      expect(unattributed).toEqual([]);
      const tree = await sandboxTree(dir);
      expect(tree).toBeDefined();
      await expect(access(join(tree!, 'killed.txt'))).rejects.toThrow();
      expect(await readFile(join(tree!, 'c.txt'), 'utf8')).toBe('C1');

      // The audit tells the whole story, in order.
      const audit = (await agents(dir, 'audit', '--thread', THREAD, '--json')).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as AuditJson);
      expect(audit.map((entry) => [entry.event, entry.toolName])).toEqual([
        ['tool-call', 'write_file'],
        ['tool-call-start', 'write_then_wait'],
        ['tool-call', 'write_file'],
      ]);
      const plain = await agents(dir, 'audit', '--thread', THREAD);
      expect(plain.stdout).toMatch(/write_then_wait.*UNFINISHED/);
    },
  );

  it(
    'resume --continue after a SIGKILL mid-call runs the interrupted call again once, from the last checkpoint (#26)',
    { timeout: 240_000 },
    async () => {
      await writeFile(
        join(dir, 'script.yaml'),
        [
          '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }]',
          '- tool_calls: [{ name: append_then_wait, args: { path: count.txt, line: "ran", ms: 120000 } }]',
          '- content: done',
          '',
        ].join('\n'),
      );
      let killed = false;
      let polling: NodeJS.Timeout | undefined;
      const run = await agentsProcess(
        dir,
        ['actor', 'run', 'bot', '--input', 'go', '--thread', THREAD],
        (stdout, child) => {
          if (polling !== undefined || !stdout.includes('append_then_wait')) return;
          polling = setInterval(() => {
            void sandboxTree(dir).then(async (tree) => {
              if (killed || tree === undefined) return;
              const written = await access(join(tree, 'count.txt')).then(
                () => true,
                () => false,
              );
              if (!written) return;
              killed = true;
              clearInterval(polling);
              child.kill('SIGKILL');
            });
          }, 50);
        },
      );
      clearInterval(polling);
      expect(killed, run.stdout + run.stderr).toBe(true);

      const resumed = await agentsProcess(dir, [
        'actor',
        'resume',
        'bot',
        '--thread',
        THREAD,
        '--continue',
        '--keep-sandbox',
        '--json',
      ]);
      expect(resumed.code, resumed.stderr).toBe(0);
      // Said before running: which call runs again and why, which one is kept.
      expect(resumed.stderr).toMatch(
        /never completed \(no result was saved\) and run again: append_then_wait/,
      );
      const events = resumed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; name?: string; text?: string });
      // Only the interrupted call ran (write_file's result was checkpointed), then the answer.
      expect(
        events.filter((event) => event.type === 'tool-call-end').map((event) => event.name),
        resumed.stdout,
      ).toEqual(['append_then_wait']);
      expect(events.some((event) => event.type === 'message' && event.text === 'done')).toBe(true);
      // The killed call's partial write was discarded, so its write lands once (#38 item 3).
      const tree = await sandboxTree(dir);
      expect(await readFile(join(tree!, 'count.txt'), 'utf8')).toBe('ran\n');
      expect(await readFile(join(tree!, 'a.txt'), 'utf8')).toBe('A1');
      // Nothing is recorded as unattributed: the partial write is not the thread's work.
      const checkpoints = JSON.parse(
        (await agents(dir, 'checkpoints', '--thread', THREAD, '--json')).stdout,
      ) as Array<{ records: Array<{ toolId: string; changed: unknown[] }> }>;
      const unattributed = checkpoints.flatMap((entry) =>
        entry.records.filter((record) => record.toolId === UNATTRIBUTED_TOOL_ID),
      );
      expect(unattributed).toEqual([]);

      // Finished: nothing left to continue (exit 4).
      const again = await agents(dir, 'actor', 'resume', 'bot', '--thread', THREAD, '--continue');
      expect(again.code).toBe(4);
      expect(again.stderr).toContain('nothing to continue');
    },
  );
});
