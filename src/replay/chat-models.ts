/**
 * The model side of a cassette: a decorator that records each turn of any chat model (messages
 * in, AI message out), and a chat model that answers from the recorded turns, checking first
 * that the messages in are the recorded ones. A changed tool result upstream shows here, as a
 * `model-input` divergence naming the turn and the message.
 */
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from '@langchain/core/language_models/chat_models';
import {
  AIMessage,
  isAIMessage,
  isToolMessage,
  type AIMessageChunk,
  type BaseMessage,
} from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import type { Cassette, ModelTurnEntry, RecordedMessage } from './cassette.js';
import type { CassetteRecorder } from './cassette-recorder.js';
import { createCassetteRedactor, type CassetteRedactOptions } from './cassette-redact.js';
import { canonical, firstDifference, preview, ReplayDivergenceError } from './divergence.js';

/** A message as a cassette holds it: what a model sees, no ids or provider metadata. */
export function toRecordedMessage(message: BaseMessage): RecordedMessage {
  const recorded: RecordedMessage = { type: message.getType(), content: message.content };
  if (message.name !== undefined) recorded.name = message.name;
  if (isAIMessage(message) && (message.tool_calls?.length ?? 0) > 0) {
    recorded.tool_calls = message.tool_calls!.map((call) => ({
      ...(call.id === undefined ? {} : { id: call.id }),
      name: call.name,
      args: call.args,
    }));
  }
  if (isToolMessage(message)) recorded.tool_call_id = message.tool_call_id;
  return recorded;
}

function fromRecordedOutput(recorded: RecordedMessage): AIMessage {
  return new AIMessage({
    content: recorded.content as string,
    ...(recorded.name === undefined ? {} : { name: recorded.name }),
    tool_calls: (recorded.tool_calls ?? []).map((call) => ({
      ...(call.id === undefined ? {} : { id: call.id }),
      name: call.name,
      args: call.args,
      type: 'tool_call' as const,
    })),
  });
}

function textOf(message: AIMessage): string {
  return typeof message.content === 'string' ? message.content : '';
}

type BoundModel = Runnable<BaseLanguageModelInput, AIMessageChunk, BaseChatModelCallOptions>;

/** Options of {@link RecordingChatModel}. */
export interface RecordingChatModelOptions {
  model: BaseChatModel;
  recorder: CassetteRecorder;
}

/**
 * Wraps a chat model so each turn is recorded; `bindTools` binds on the wrapped model and keeps
 * recording. Use it where the model goes in a graph.
 */
export class RecordingChatModel extends BaseChatModel {
  readonly model: BaseChatModel;
  readonly recorder: CassetteRecorder;
  private readonly bound: BoundModel | undefined;

  constructor(options: RecordingChatModelOptions, bound?: BoundModel) {
    super({});
    this.model = options.model;
    this.recorder = options.recorder;
    this.bound = bound;
  }

  _llmType(): string {
    return 'recording';
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<BaseChatModelCallOptions>,
  ): BoundModel {
    if (this.model.bindTools === undefined) {
      throw new Error(`The recorded model (${this.model.getName()}) does not support bindTools.`);
    }
    const bound = this.model.bindTools(tools, kwargs);
    return new RecordingChatModel(
      { model: this.model, recorder: this.recorder },
      bound,
    ) as unknown as BoundModel;
  }

  async _generate(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    _runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const target = this.bound ?? this.model;
    const output = (await target.invoke(messages, {
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    })) as AIMessage;
    const message = new AIMessage({
      content: output.content,
      tool_calls: output.tool_calls ?? [],
      ...(output.name === undefined ? {} : { name: output.name }),
    });
    this.recorder.recordModelTurn(messages.map(toRecordedMessage), toRecordedMessage(message));
    return { generations: [{ text: textOf(message), message }] };
  }
}

/** Options of {@link ReplayChatModel}. */
export type ReplayChatModelOptions = CassetteRedactOptions & { cassette: Cassette };

/**
 * A chat model that answers turn N with the recorded turn N, after checking the messages in are
 * the recorded ones (in the cassette's redacted form). No network, no key. `bindTools` is
 * accepted and keeps the same turn counter.
 */
export class ReplayChatModel extends BaseChatModel {
  readonly turns: readonly ModelTurnEntry[];
  /** The first divergence met, if any (kept even when a graph swallowed the throw). */
  divergence: ReplayDivergenceError | undefined;
  /** Names of the tools bound last, for tests and diagnostics. */
  boundToolNames: string[] = [];
  private next = 0;
  private readonly redact: (value: unknown) => unknown;

  constructor(options: ReplayChatModelOptions) {
    super({});
    this.turns = options.cassette.entries.filter(
      (entry): entry is ModelTurnEntry => entry.kind === 'model',
    );
    this.redact = createCassetteRedactor(options);
  }

  _llmType(): string {
    return 'replay';
  }

  /** Recorded turns not answered yet. */
  unused(): ModelTurnEntry[] {
    return this.turns.slice(this.next);
  }

  override bindTools(
    tools: BindToolsInput[],
    _kwargs?: Partial<BaseChatModelCallOptions>,
  ): BoundModel {
    this.boundToolNames = tools.map((tool) =>
      typeof tool === 'object' && tool !== null && 'name' in tool ? String(tool.name) : '',
    );
    return this as unknown as BoundModel;
  }

  private diverge(error: ReplayDivergenceError): never {
    this.divergence ??= error;
    throw error;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const recorded = this.turns[this.next];
    const turnNumber = this.next + 1;
    if (recorded === undefined) {
      this.diverge(
        new ReplayDivergenceError(
          `Replay diverged at model turn ${turnNumber}: the recording has ${this.turns.length} ` +
            'turn(s) and the run asked for another.',
          { kind: 'unrecorded-turn', step: `model turn ${turnNumber}` },
        ),
      );
    }
    const actual = canonical(this.redact(messages.map(toRecordedMessage)));
    const difference = firstDifference(canonical(recorded.input), actual);
    if (difference !== undefined) {
      this.diverge(
        new ReplayDivergenceError(
          `Replay diverged at model turn ${turnNumber}: the messages in differ from the recording ` +
            `at input${difference.path.startsWith('[') ? '' : '.'}${difference.path}: recorded ` +
            `${preview(difference.expected)}, the run has ${preview(difference.actual)}.`,
          {
            kind: 'model-input',
            step: `model turn ${turnNumber}`,
            path: `input${difference.path.startsWith('[') ? '' : '.'}${difference.path}`,
            expected: difference.expected,
            actual: difference.actual,
          },
        ),
      );
    }
    this.next++;
    const message = fromRecordedOutput(recorded.output);
    return { generations: [{ text: textOf(message), message }] };
  }
}
