/**
 * Approvals from code: an actor in `ask` mode edits a git repo through its sandbox with the
 * filesystem MCP server. Its model asks for two writes in one turn; the run pauses with one
 * approval request per write, the code approves one and rejects the other (with a message the
 * model sees), resumes, and the read that follows runs without asking (read-only tool).
 *
 *   npx tsx examples/approvals.ts
 *
 * Exits non-zero unless only the approved file is in the sandbox, the change log and the audit
 * log say what happened, and the user's repo never changed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BaseMessage } from '@langchain/core/messages';
import { createActor } from '../src/index.js';
import { createWorkspaceStore, toResumeValue } from '../src/entries/actors.js';
import { readAuditLog } from '../src/entries/policy.js';
import { createScriptedModel } from '../src/testing/index.js';
import type { ActorRunEvent, ChangeRecord } from '../src/index.js';
import type { PendingApproval } from '../src/entries/actors.js';
import type { ApprovalResponse, AuditEntry } from '../src/entries/policy.js';
import { check, filesystemServerEntry, makeGitRepo, repoState } from './support/helpers.js';

const THREAD = 'approvals-example';

/** The `path` argument an audit entry recorded. */
function pathOf(args: unknown): string {
  return typeof args === 'object' && args !== null && 'path' in args ? String(args.path) : '';
}

/** Prints the run's events and returns the approval requests it paused on. */
async function follow(events: AsyncIterable<ActorRunEvent>): Promise<PendingApproval[]> {
  const pending: PendingApproval[] = [];
  for await (const event of events) {
    if (event.type === 'tool-call-start')
      console.log(`  call   ${event.name} ${JSON.stringify(event.args)}`);
    else if (event.type === 'tool-call-end')
      console.log(
        `  result ${event.name}${event.isError ? ' (error)' : ''}: ${event.text.split('\n')[0]}`,
      );
    else if (event.type === 'message') console.log(`  answer ${event.text}`);
    else if (event.type === 'interrupt') pending.push(...(event.approvals ?? []));
  }
  return pending;
}

const temp = await realpath(await mkdtemp(join(tmpdir(), 'agents-approvals-')));
try {
  const project = join(temp, 'project');
  makeGitRepo(project, { 'README.md': '# demo\n' });
  const projectBefore = repoState(project);

  const store = createWorkspaceStore(join(temp, '.agents'));
  await store.put('skill', 'files', {
    description: 'Edit files.',
    mcpServers: [
      {
        name: 'fs',
        transport: 'stdio',
        command: process.execPath,
        args: [filesystemServerEntry()],
      },
    ],
  });
  const model = await createScriptedModel({
    steps: [
      {
        tool_calls: [
          { name: 'write_file', args: { path: 'plan.md', content: '1. ship it\n' } },
          { name: 'write_file', args: { path: '.env', content: 'TOKEN=oops\n' } },
        ],
      },
      { tool_calls: [{ name: 'read_text_file', args: { path: 'plan.md' } }] },
      { content: 'Wrote the plan; the .env write was refused.' },
    ],
  });

  let sandboxRoot = '';
  {
    await using actor = await createActor({
      config: {
        name: 'careful',
        skills: ['files'],
        sandbox: { source: project },
        checkpointer: { type: 'memory' },
        policy: { mode: 'ask' }, // read-only tools run; every other call waits for a human
      },
      workspace: store,
      model,
      sandboxBaseDir: temp,
    });
    await actor.activate();
    sandboxRoot = actor.sandbox?.root ?? '';
    check(sandboxRoot !== '', 'the actor has no sandbox');

    console.log('run:');
    const pending = await follow(actor.run('Write a plan.', { threadId: THREAD }));
    for (const { preview } of pending)
      console.log(
        `approval requested: ${preview.toolId} ${JSON.stringify(preview.args)} (${preview.rule})`,
      );
    check(pending.length === 2, `expected 2 approval requests, got ${pending.length}`);
    check(
      pending.every(
        ({ preview }) => preview.toolId === 'mcp:fs/write_file' && preview.rule === 'mode ask',
      ),
      'the approval requests are not the two write_file calls asked by mode ask',
    );
    check(!existsSync(join(sandboxRoot, 'plan.md')), 'a write ran before it was approved');

    // The human's answers: the plan yes, the .env no (the model reads the message).
    const answers = pending.map(({ preview }): ApprovalResponse =>
      preview.args['path'] === 'plan.md'
        ? { type: 'approve', by: 'example' }
        : { type: 'reject', message: 'no secrets in the repo', by: 'example' },
    );
    console.log('resume:');
    const more = await follow(actor.resume(toResumeValue(pending, answers), { threadId: THREAD }));
    check(more.length === 0, `the resumed run paused again (${more.length} requests)`);

    // Files: only the approved write reached the sandbox.
    check(
      readFileSync(join(sandboxRoot, 'plan.md'), 'utf8') === '1. ship it\n',
      'the sandbox lacks the approved plan.md',
    );
    check(!existsSync(join(sandboxRoot, '.env')), 'the rejected .env write reached the sandbox');

    // Graph state: one change record, for the approved write; the model saw the refusal.
    const state = await actor.graph.getState({ configurable: { thread_id: THREAD } });
    const changeLog: ChangeRecord[] = state.values.changeLog;
    const messages: BaseMessage[] = state.values.messages;
    console.log(`change log: ${JSON.stringify(changeLog.map((record) => record.changed))}`);
    check(changeLog.length === 1, `expected 1 change record, got ${changeLog.length}`);
    check(
      JSON.stringify(changeLog[0]?.changed) === JSON.stringify([{ status: 'A', path: 'plan.md' }]),
      'the change record is not "A plan.md"',
    );
    const refusal = messages.find(
      (message) => message.getType() === 'tool' && message.text.includes('no secrets in the repo'),
    );
    check(refusal !== undefined, 'the model never saw the rejection message');

    // Audit log: both requests, then each answer, then the read that needed no approval.
    const { entries } = await readAuditLog(actor.auditFile, { threadId: THREAD });
    for (const entry of entries)
      console.log(
        `audit: ${entry.event} ${entry.toolName} ${JSON.stringify(entry.args)}` +
          (entry.policy === undefined
            ? ''
            : ` ${entry.policy.outcome} by ${entry.policy.decidedBy}`),
      );
    // The two paused calls run as parallel tasks, so each pair may come in either order.
    const line = (entry: AuditEntry): string =>
      `${entry.event} ${entry.toolName} ${pathOf(entry.args)} ${entry.policy?.outcome ?? '-'}`;
    const lines = entries.map(line);
    const pairs = [lines.slice(0, 2).sort(), lines.slice(2, 4).sort(), lines.slice(4)];
    check(
      JSON.stringify(pairs) ===
        JSON.stringify([
          ['approval-requested write_file .env -', 'approval-requested write_file plan.md -'],
          ['tool-call write_file .env rejected', 'tool-call write_file plan.md approved'],
          ['tool-call read_text_file plan.md allowed'],
        ]),
      `unexpected audit log:\n${lines.join('\n')}`,
    );
    const approved = entries.find((entry) => entry.policy?.outcome === 'approved');
    const rejected = entries.find((entry) => entry.policy?.outcome === 'rejected');
    check(
      approved?.policy?.decidedBy === 'example' && approved.snapshot === changeLog[0]?.snapshot,
      'the approved call is not recorded with who approved it and its snapshot',
    );
    check(
      rejected?.policy?.message === 'no secrets in the repo' && rejected.snapshot === undefined,
      'the rejected call is not recorded with its message',
    );
  } // `await using`: servers stopped, sandbox removed

  check(!existsSync(sandboxRoot), 'the sandbox folder remains');
  check(repoState(project) === projectBefore, "the user's repo changed");
  console.log('approvals ok');
} finally {
  await rm(temp, { recursive: true, force: true });
}
