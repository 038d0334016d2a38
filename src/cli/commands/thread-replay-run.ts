/**
 * `agents thread replay CASSETTE`, the run itself: the recorded actor is rebuilt in a throwaway
 * project whose files are the recorded base, its servers are replay transports (no process, no
 * network), its model answers from the cassette, and the graph, pipeline, policy, checkpoints
 * and sandbox run for real. Each call's recorded change set is written where the server wrote
 * it; the tree after each call and at the end, the policy's outcomes and the checkpoint count
 * are compared with the recording. Approvals are answered as they were.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/client';
import { createActor } from '../../actors/actor.js';
import { toResumeValue, type PendingApproval, type PendingInput } from '../../actors/approvals.js';
import type { ActorRunEvent } from '../../actors/actor-types.js';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type {
  BaseEntry,
  Cassette,
  EndEntry,
  RunEntry,
  ThreadEntry,
} from '../../replay/cassette.js';
import { createCassetteRecorder } from '../../replay/cassette-recorder.js';
import { ReplayChatModel } from '../../replay/chat-models.js';
import { ReplayDivergenceError } from '../../replay/divergence.js';
import {
  createReplayFiles,
  expandSandboxAlias,
  type ReplayedCall,
} from '../../replay/file-replay.js';
import { checkLiveTools } from '../../replay/live-tools.js';
import type { InputRequestPreview } from '../../policy/input-requests.js';
import { createRecordedInputAnswers } from '../../replay/input-answers.js';
import { countCheckpoints } from '../../replay/record-cli.js';
import { writeReplayBase } from '../../replay/replay-base.js';
import { notReplayed } from '../../replay/replay-graph.js';
import { createReplayTransport, type ReplayTransport } from '../../replay/replay-transport.js';
import { checkSeedable, seedThread } from '../../replay/thread-history.js';
import { createServerManager } from '../../servers/server-manager.js';
import { createWorkspaceStore } from '../../workspace/store.js';

/** What a replay found. */
export interface ThreadReplayReport {
  actor: string;
  /** The sandbox's tree id when the replay ended. */
  tree: string | undefined;
  /** The tree id the recording ended with. */
  recordedTree: string | undefined;
  checkpoints: number;
  recordedCheckpoints: number | undefined;
  calls: ReplayedCall[];
  treesChecked: number;
  /** Trees not compared: an older recording redacted a file they hold without its content id. */
  treesUnchecked: number;
  /**
   * Files written redacted (a secret masked): their placeholders count as the recorded content
   * ids in the trees compared, so the trees are checked all the same.
   */
  redacted: string[];
  /** The first divergence, if any (the CLI exits 11 with it). */
  divergence: ReplayDivergenceError | undefined;
  /** A call still waiting for an approval the recording never gave (it ended paused too). */
  pausedAt?: string;
}

function needsFileSide(source: string, what: string): never {
  throw new AgentsError(
    AgentsErrorCode.CassetteInvalid,
    `Cassette ${source} has no ${what}: it was written by format version 1 or by the library's recorder, without the file side \`agents thread replay\` rebuilds the run from. Record the run again with \`agents actor run NAME --input TEXT --record\`, or replay it in code with replayCassette.`,
    { details: { source } },
  );
}

/** Replays `cassette`; never throws a divergence, returns it in the report. */
export async function replayThread(
  cassette: Cassette,
  source: string,
  onWarning: (message: string) => void,
  signal?: AbortSignal,
  options: {
    /**
     * `--model live`: the actor's own model (its config's, e.g. a new prompt or model) against
     * the recorded tools; a call the recording lacks diverges. Default: the cassette's turns.
     */
    liveModel?: boolean;
    /**
     * `--tools live`: the recorded servers started for real (a server upgrade) answer the
     * recorded model turns; a different result or tree diverges. Default: the cassette answers.
     */
    liveTools?: boolean;
    /** `--base DIR`: the project as recorded, for a base the cassette lists by content id. */
    baseDir?: string;
  } = {},
): Promise<ThreadReplayReport> {
  const actorEntry = cassette.entries.find((entry) => entry.kind === 'actor');
  const base = cassette.entries.find((entry): entry is BaseEntry => entry.kind === 'base');
  const runs = cassette.entries.filter((entry): entry is RunEntry => entry.kind === 'run');
  const end = cassette.entries.find((entry): entry is EndEntry => entry.kind === 'end');
  if (actorEntry === undefined) needsFileSide(source, 'actor entry');
  if (base === undefined) needsFileSide(source, 'base entry (the sandbox files)');
  if (runs.length === 0) needsFileSide(source, 'run entry (the input)');
  const history = cassette.entries.find((entry): entry is ThreadEntry => entry.kind === 'thread');
  if (history !== undefined) checkSeedable(history, source);
  if (history === undefined && runs[0]!.mode !== 'run') {
    throw new AgentsError(
      AgentsErrorCode.CassetteInvalid,
      `Cassette ${source} continues a thread (\`actor resume\`) but holds no \`thread\` entry (its state when the recording started; cassettes before format version 3 lack it): record the resume again with this version, or record the run that started the thread.`,
      { details: { source } },
    );
  }

  const dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-replay-')));
  try {
    const projectDir = join(dir, 'project');
    const store = createWorkspaceStore(join(dir, 'workspace'), { projectDir });
    for (const [name, config] of Object.entries(actorEntry.servers)) {
      await store.put('server', name, config as never);
    }
    for (const [name, config] of Object.entries(actorEntry.skills)) {
      await store.put('skill', name, config as never);
    }
    await store.put('actor', actorEntry.name, {
      ...actorEntry.config,
      // The replay's own throwaway checkpoints, beside (not in) its project files.
      checkpointer: { type: 'sqlite', path: join(dir, 'checkpoints.sqlite') },
    } as never);

    const recorder = createCassetteRecorder();
    const pathAliases = () => recorder.pathAliases();
    const files = createReplayFiles(cassette, () => recorder.files.sandbox(), options);
    await writeReplayBase(projectDir, base, files, source, options);
    const live = options.liveTools
      ? checkLiveTools(cassette, recorder, () => files.callInFlight())
      : undefined;
    const transports: Array<[string, ReplayTransport]> = [];
    // Live tools: the actor starts its servers itself, confined as in a recorded run.
    const manager = live
      ? undefined
      : createServerManager({
          cwd: projectDir,
          transportFactory: (config) => {
            const transport = createReplayTransport({
              cassette,
              server: config.name,
              pathAliases,
              beforeAnswer: (exchange) => files.beforeAnswer(exchange),
              expand: (value) => {
                const root = recorder.files.sandbox()?.root;
                return root === undefined ? value : expandSandboxAlias(value, root);
              },
            });
            transports.push([config.name, transport]);
            return {
              transport: transport as unknown as Transport,
              target: `the cassette's recording of ${config.name}`,
              close: () => transport.close().catch(() => undefined),
            };
          },
        });
    // With a live model its turns are not the recorded ones: an empty turn list is never used.
    const model = new ReplayChatModel({
      cassette: options.liveModel
        ? { ...cassette, entries: cassette.entries.filter((entry) => entry.kind !== 'model') }
        : cassette,
      pathAliases,
    });
    const inputAnswers = createRecordedInputAnswers(cassette);
    const threadId = `replay-${randomUUID()}`;
    const actor = await createActor({
      name: actorEntry.name,
      workspace: store,
      ...(options.liveModel ? {} : { model }),
      threadId,
      ephemeralThread: true,
      keepSandbox: false,
      ...(manager === undefined ? {} : { serverManager: manager }),
      middleware: [files.middleware],
      record: live?.recorder ?? recorder,
      sandboxFrom: 'worktree',
      auditFile: join(dir, 'audit.jsonl'),
      onWarning,
    });
    let failure: unknown;
    let tree: string | undefined;
    let checkpoints = 0;
    let pausedAt: string | undefined;
    const early: ReplayDivergenceError[] = [];
    try {
      await actor.activate(signal ? { signal } : {});
      const sandbox = recorder.files.sandbox();
      if (sandbox !== undefined && !files.redactedSeen) {
        const baseTree = await files.treeOf(sandbox.store, sandbox.head);
        if (baseTree !== base.tree) {
          early.push(
            new ReplayDivergenceError(
              `Replay diverged at the base: the rebuilt sandbox's tree is ${baseTree}, the recording started from ${base.tree}` +
                (options.baseDir === undefined
                  ? '.'
                  : `; --base ${options.baseDir} does not hold the files the run started from (check out its commit, with the same uncommitted changes).`),
              { kind: 'tree', step: 'base', expected: base.tree, actual: baseTree },
            ),
          );
        }
      }
      // The thread as the recording found it; its own checkpoints are not the recorded runs'.
      let seeded = 0;
      try {
        if (history !== undefined) {
          await seedThread(actor.graph, threadId, history, {
            expand: (value) =>
              sandbox === undefined ? value : expandSandboxAlias(value, sandbox.root),
            sandboxHead: sandbox?.head,
            answers: (question) => inputAnswers.answersUpTo(question as InputRequestPreview),
            approval: (toolCallId) => files.approvalFor(toolCallId),
          });
          seeded = await countCheckpoints(actor, threadId);
        }
        for (const run of runs) {
          // `actor resume` (an answer, or --continue): the seeded pending step runs again and
          // asks again for the approvals the recording answers (its questions' answers were
          // saved with the seeded step).
          const events =
            run.mode === 'run'
              ? actor.run(run.input ?? '', { threadId })
              : actor.resume({ type: 'continue' }, { threadId });
          pausedAt = await drive(events, (value) => actor.resume(value, { threadId }));
          if (pausedAt !== undefined) break;
        }
      } catch (error) {
        failure = error;
      }
      if (sandbox !== undefined) tree = await files.treeOf(sandbox.store, sandbox.head);
      checkpoints = (await countCheckpoints(actor, threadId)) - seeded;
    } finally {
      await actor.deactivate({ keepSandbox: false }).catch(() => undefined);
      await manager?.close().catch(() => undefined);
    }

    /** Answers approvals as recorded; returns the call left waiting when one was never answered. */
    async function drive(
      first: AsyncGenerator<ActorRunEvent, void, undefined>,
      resume: (value: unknown) => AsyncGenerator<ActorRunEvent, void, undefined>,
    ): Promise<string | undefined> {
      let events = first;
      for (;;) {
        const pending: Array<PendingApproval | PendingInput> = [];
        const answers: unknown[] = [];
        for await (const event of events) {
          if (event.type !== 'interrupt') continue;
          for (const item of event.approvals ?? []) {
            pending.push(item);
            answers.push(files.approvalFor(item.preview.toolCallId));
          }
          // A server's question: answered with what the recorded retry of the call carried.
          for (const item of event.inputs ?? []) {
            pending.push(item);
            answers.push(inputAnswers.answerFor(item.preview));
          }
        }
        if (pending.length === 0) return undefined;
        const missing = pending.find((_, index) => answers[index] === undefined);
        if (missing !== undefined) return missing.preview.toolId;
        events = resume(toResumeValue(pending, answers));
      }
    }

    const found = [
      ...early,
      live?.divergence,
      ...transports.map(([, transport]) => transport.divergence),
      model.divergence,
      files.divergence,
    ]
      .filter((item): item is ReplayDivergenceError => item !== undefined)
      .sort((a, b) => a.order - b.order);
    let divergence = found[0];
    if (divergence === undefined && failure !== undefined) throw failure;
    if (divergence === undefined && pausedAt === undefined) {
      divergence = notReplayed(transports, model);
    }
    if (divergence === undefined && end?.tree !== undefined && !files.redactedSeen) {
      if (tree !== end.tree) {
        divergence = new ReplayDivergenceError(
          `Replay diverged at the end: the sandbox's tree is ${tree}, the recording ended with ${end.tree}.`,
          { kind: 'tree', step: 'end', expected: end.tree, actual: tree },
        );
      }
    }
    if (divergence === undefined && end?.checkpoints !== undefined) {
      if (checkpoints !== end.checkpoints) {
        divergence = new ReplayDivergenceError(
          `Replay diverged at the end: the run made ${checkpoints} checkpoint(s), the recording ${end.checkpoints}.`,
          { kind: 'checkpoints', step: 'end', expected: end.checkpoints, actual: checkpoints },
        );
      }
    }
    return {
      actor: actorEntry.name,
      tree,
      recordedTree: end?.tree,
      checkpoints,
      recordedCheckpoints: end?.checkpoints,
      calls: files.calls(),
      treesChecked: files.treesChecked,
      treesUnchecked: files.treesUnchecked,
      redacted: files.placeholders(),
      divergence,
      ...(pausedAt === undefined ? {} : { pausedAt }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
