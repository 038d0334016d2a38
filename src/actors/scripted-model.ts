import { readFile } from 'node:fs/promises';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type {
  BaseChatModelCallOptions,
  BindToolsInput,
} from '@langchain/core/language_models/chat_models';
import { AIMessage, isAIMessage, isHumanMessage } from '@langchain/core/messages';
import type { BaseMessage, AIMessageChunk } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import { z } from 'zod';
import { parseYaml } from '../config/load.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';

/** One scripted tool call. */
export const ScriptedToolCallSchema = z.strictObject({
  name: z.string().min(1).describe('Tool name as the model sees it.'),
  args: z.record(z.string(), z.unknown()).default({}).describe('Arguments of the call.'),
  id: z.string().optional().describe('Tool call id (default: call_STEP_INDEX).'),
});

/** One model turn: tool calls, a final answer, or both. */
export const ScriptedStepSchema = z
  .strictObject({
    content: z.string().default('').describe('Text of the AI message.'),
    tool_calls: z.array(ScriptedToolCallSchema).default([]).describe('Tool calls of this turn.'),
  })
  .describe('One model turn.');

const StepListSchema = z.array(ScriptedStepSchema);
const StepObjectSchema = z.strictObject({ steps: StepListSchema });
/** A script: a list of steps (or `{ steps: [...] }`), replayed in order for each user input. */
export const ModelScriptSchema = z.union([StepListSchema, StepObjectSchema]);
export type ScriptedStep = z.infer<typeof ScriptedStepSchema>;
export type ModelScriptInput = z.input<typeof ModelScriptSchema>;

/** Options for {@link ScriptedChatModel}. */
export interface ScriptedChatModelOptions {
  steps: readonly ScriptedStep[];
  /** Text of the message returned once the script is exhausted (default "(script finished)"). */
  exhausted?: string;
}

/**
 * An offline chat model that replays a script: turn N after the latest human message returns
 * step N. Deterministic, no network, no API key; for demos and tests. Tool binding is accepted
 * (and recorded in `boundToolNames`) but does not change the script.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly steps: readonly ScriptedStep[];
  readonly exhausted: string;
  /** The name a provider reports as `model` (a sampling result names it). */
  readonly model = 'scripted';
  /** Names of the tools bound on the latest `bindTools` call, for tests and diagnostics. */
  boundToolNames: string[] = [];

  constructor(options: ScriptedChatModelOptions) {
    super({});
    this.steps = options.steps;
    this.exhausted = options.exhausted ?? '(script finished)';
  }

  static override lc_name(): string {
    return 'ScriptedChatModel';
  }

  _llmType(): string {
    return 'scripted';
  }

  override bindTools(
    tools: BindToolsInput[],
    _kwargs?: Partial<BaseChatModelCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, BaseChatModelCallOptions> {
    this.boundToolNames = tools.map(toolName).filter((name): name is string => name !== undefined);
    return this as unknown as Runnable<
      BaseLanguageModelInput,
      AIMessageChunk,
      BaseChatModelCallOptions
    >;
  }

  async _generate(
    messages: BaseMessage[],
    _options: this['ParsedCallOptions'],
    _runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    let lastHuman = -1;
    messages.forEach((message, index) => {
      if (isHumanMessage(message)) lastHuman = index;
    });
    const turn = messages.slice(lastHuman + 1).filter((message) => isAIMessage(message)).length;
    const step = this.steps[turn];
    const message = step
      ? new AIMessage({
          content: step.content,
          tool_calls: step.tool_calls.map((call, index) => ({
            id: call.id ?? `call_${turn}_${index}`,
            name: call.name,
            args: call.args,
            type: 'tool_call' as const,
          })),
        })
      : new AIMessage({ content: this.exhausted });
    return {
      generations: [{ text: typeof message.content === 'string' ? message.content : '', message }],
    };
  }
}

function toolName(tool: BindToolsInput): string | undefined {
  if (typeof tool !== 'object' || tool === null) return undefined;
  if ('name' in tool && typeof tool.name === 'string') return tool.name;
  if (
    'function' in tool &&
    typeof tool.function === 'object' &&
    tool.function !== null &&
    'name' in tool.function
  ) {
    return String(tool.function.name);
  }
  return undefined;
}

/**
 * The one branch of {@link ModelScriptSchema} that fits the value's shape. Validating against
 * the union would report only zod's "Invalid input" for a typo in one step; the branch names
 * the step and the field.
 */
function scriptBranchFor(value: unknown): typeof StepListSchema | typeof StepObjectSchema {
  return Array.isArray(value) ? StepListSchema : StepObjectSchema;
}

/** Parses a script's YAML text (see {@link ModelScriptSchema}); throws `CONFIG_INVALID`. */
export function parseModelScript(text: string, file = '<script>'): ScriptedStep[] {
  const raw = parseYaml(text, z.unknown(), { file });
  const script = parseYaml(text, scriptBranchFor(raw), { file });
  return Array.isArray(script) ? script : script.steps;
}

/**
 * Creates a {@link ScriptedChatModel} from a YAML file or from steps in code.
 * Throws `CONFIG_NOT_FOUND` / `CONFIG_INVALID` for a missing or malformed file.
 */
export async function createScriptedModel(
  source: { file: string } | { steps: ModelScriptInput },
): Promise<ScriptedChatModel> {
  if ('steps' in source) {
    const parsed = scriptBranchFor(source.steps).parse(source.steps);
    return new ScriptedChatModel({ steps: Array.isArray(parsed) ? parsed : parsed.steps });
  }
  let text: string;
  try {
    text = await readFile(source.file, 'utf8');
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.ConfigNotFound,
      `Model script ${source.file} cannot be read; the actor's model "scripted:PATH" must name a YAML file.`,
      { cause: error, details: { file: source.file } },
    );
  }
  return new ScriptedChatModel({ steps: parseModelScript(text, source.file) });
}
