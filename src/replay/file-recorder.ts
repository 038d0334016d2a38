/**
 * Records the file side of a run into a cassette: the sandbox's files when the recording starts
 * (`base`), then for every tool call the pipeline finished its policy decision (and who
 * approved), the answers given to its server's questions, whether it failed, what it changed in
 * the sandbox as content, and the tree id after it (`call`), and at the end the tree id of the sandbox's head (`end`). Everything is read back
 * from the snapshot store (public API: `diff`, `readBlob`, `listTree`), never from the live
 * folder, so a parallel call writing meanwhile cannot mix into another call's change set.
 */
import { ResultMetaKey, type ToolResult } from '../core/tool-descriptor.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';
import { changeRecordOfError, findChangeRecord } from '../pipeline/change-tracking.js';
import type { RunSandbox } from '../sandbox/backend.js';
import type { ChangeRecord } from '../core/change-record.js';
import {
  describeInputHandler,
  type InputRequestAnswer,
  type InputRequestHandler,
} from '../core/input-requests.js';
import type {
  BaseEntry,
  CallEntry,
  CassetteEntry,
  EndEntry,
  RecordedAnswer,
  RecordedChange,
} from './cassette.js';
import { recordFile, recordTree, snapshotTreeId } from './file-content.js';

/**
 * What the file side needs of the cassette recorder that owns it (`cassette-recorder.ts`, which
 * creates this one: named here so the two modules do not import each other).
 */
interface EntrySink {
  record(entry: CassetteEntry): void;
  defer(work: Promise<unknown>): void;
  /** Resolves once the work handed to `defer` so far is done. */
  settled(): Promise<void>;
  redact(value: unknown): unknown;
}

/** The file-side recording of one cassette recorder. */
export interface FileSideRecorder {
  /** The sandbox the run works in; its head now is the recording's base. */
  attachSandbox(sandbox: RunSandbox): void;
  /** The sandbox given to {@link FileSideRecorder.attachSandbox}, if any. */
  sandbox(): RunSandbox | undefined;
  /** Outermost tool middleware that records each finished call (see the file comment). */
  readonly middleware: ToolMiddleware;
  /**
   * Records the end: the tree id of the sandbox's head and how many checkpoints the recorded
   * runs made. Call it while the sandbox is still open (before deactivating the actor).
   */
  end(checkpoints?: number): Promise<void>;
}

/** LangGraph's pause for an approval passes through the pipeline as a throw; it is no outcome. */
function isInterrupt(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'GraphInterrupt' || name === 'NodeInterrupt';
}

function policyOf(result: ToolResult | undefined, recorder: EntrySink): CallEntry['policy'] {
  const record = result?._meta?.[ResultMetaKey.Policy] as Record<string, unknown> | undefined;
  if (record === undefined || typeof record['outcome'] !== 'string') return undefined;
  const policy: NonNullable<CallEntry['policy']> = { outcome: record['outcome'] };
  for (const key of ['decision', 'rule', 'decidedBy', 'message'] as const) {
    const value = record[key];
    if (typeof value === 'string') policy[key] = recorder.redact(value) as string;
  }
  if (record['editedArgs'] !== undefined) policy.editedArgs = recorder.redact(record['editedArgs']);
  return policy;
}

/**
 * `handler` noting each round's answers in `answers`: the person's answer, as the interrupt
 * returned it (a resumed call asks again and gets its earlier rounds' answers back, so the
 * attempt that finishes notes every round).
 */
function notingAnswers(
  handler: InputRequestHandler,
  answers: RecordedAnswer[],
): InputRequestHandler {
  const note = (round: number, answer: InputRequestAnswer): InputRequestAnswer => {
    answers.push({ round, responses: answer.responses });
    return answer;
  };
  return describeInputHandler(
    (round) => {
      const answer = handler(round);
      return answer instanceof Promise
        ? answer.then((given) => note(round.round, given))
        : note(round.round, answer);
    },
    {
      ...(handler.offersSampling === undefined ? {} : { offersSampling: handler.offersSampling }),
      ...(handler.refusal === undefined ? {} : { refusal: handler.refusal }),
    },
  );
}

/** Creates the file side of `recorder` (the recorder makes one; see `attachSandbox`). */
export function createFileSideRecorder(recorder: EntrySink): FileSideRecorder {
  let sandbox: RunSandbox | undefined;
  let calls = 0;

  const fillChanges = async (entry: CallEntry, change: ChangeRecord): Promise<void> => {
    const store = sandbox!.store;
    const changes: RecordedChange[] = [];
    for (const item of await store.diff(change.parent, change.snapshot)) {
      if (item.status === 'D' || /^0+$/.test(item.dstMode)) {
        changes.push({ path: item.path, deleted: true });
      } else if (item.dstMode !== '160000') {
        changes.push(
          recordFile(
            item.path,
            item.dstMode,
            await store.readBlob(item.dstSha),
            (value) => recorder.redact(value),
            item.dstSha,
          ),
        );
      }
    }
    entry.changes = changes;
    entry.tree = await snapshotTreeId(store, change.snapshot);
  };

  const recordCall = (
    request: Parameters<ToolMiddleware['wrap']>[0],
    result: ToolResult | undefined,
    error: unknown,
    answers: RecordedAnswer[],
  ): void => {
    const toolCallId = request.context.toolCallId;
    const entry: CallEntry = {
      kind: 'call',
      call: ++calls,
      ...(toolCallId === undefined ? {} : { toolCallId }),
      toolId: request.descriptor.id,
    };
    const policy = policyOf(result, recorder);
    if (policy !== undefined) entry.policy = policy;
    if (error !== undefined || result?.isError === true) entry.isError = true;
    if (answers.length > 0) entry.answers = recorder.redact(answers) as RecordedAnswer[];
    recorder.record(entry);
    const change = result !== undefined ? findChangeRecord(result) : changeRecordOfError(error);
    if (change !== undefined && sandbox !== undefined) recorder.defer(fillChanges(entry, change));
  };

  return {
    sandbox: () => sandbox,
    attachSandbox(opened) {
      sandbox = opened;
      const entry: BaseEntry = { kind: 'base', tree: '', files: [] };
      recorder.record(entry);
      const head = opened.head;
      recorder.defer(
        recordTree(opened.store, head, (value) => recorder.redact(value)).then((base) => {
          entry.tree = base.tree;
          entry.files = base.files;
          if (base.listing !== undefined) entry.listing = base.listing;
        }),
      );
    },
    middleware: {
      name: 'cassette-files',
      async wrap(request, next) {
        // The answers of this attempt only: a paused attempt's are asked again on resume.
        const answers: RecordedAnswer[] = [];
        const asks = request.capabilities?.inputRequests;
        const noting =
          asks === undefined
            ? request
            : {
                ...request,
                capabilities: {
                  ...request.capabilities,
                  inputRequests: notingAnswers(asks, answers),
                },
              };
        let result: ToolResult;
        try {
          result = await next(noting);
        } catch (error) {
          if (!isInterrupt(error)) recordCall(request, undefined, error, answers);
          throw error;
        }
        recordCall(request, result, undefined, answers);
        return result;
      },
    },
    async end(checkpoints) {
      await recorder.settled();
      const entry: EndEntry = { kind: 'end' };
      if (sandbox !== undefined) entry.tree = await snapshotTreeId(sandbox.store, sandbox.head);
      if (checkpoints !== undefined) entry.checkpoints = checkpoints;
      recorder.record(entry);
    },
  };
}
