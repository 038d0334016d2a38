import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { createScriptedModel } from './scripted-model.js';

/** Options for {@link resolveChatModel}. */
export interface ResolveChatModelOptions {
  /** Resolves a `scripted:PATH` script path (relative paths are relative to the project). */
  resolvePath: (path: string) => string;
  /** Script used for a bare `scripted` (default: none, which is an error). */
  defaultScript?: string;
}

/**
 * Turns an actor's `model` string into a chat model:
 * - `scripted:PATH` (or `scripted` with a default script): the offline {@link ScriptedChatModel};
 * - `provider:model` (e.g. `openai:gpt-4.1`, `anthropic:claude-sonnet-4-5`): LangChain's
 *   `initChatModel` from `langchain`, whose provider package the user installs.
 *
 * Throws `CONFIG_INVALID` naming the model and the package to install when it cannot be made.
 */
export async function resolveChatModel(
  spec: string,
  options: ResolveChatModelOptions,
): Promise<BaseChatModel> {
  if (spec === 'scripted' || spec.startsWith('scripted:')) {
    const path = spec === 'scripted' ? options.defaultScript : spec.slice('scripted:'.length);
    if (path === undefined || path === '') {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        'Model "scripted" needs a script: write model: scripted:path/to/script.yaml.',
        { details: { model: spec, problems: [] } },
      );
    }
    return createScriptedModel({ file: options.resolvePath(path) });
  }
  if (!/^[a-z0-9_-]+:.+/i.test(spec)) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Model "${spec}" is not "provider:model" (e.g. openai:gpt-4.1) nor "scripted:PATH".`,
      { details: { model: spec, problems: [] } },
    );
  }
  let initChatModel: (model: string) => Promise<unknown>;
  try {
    // Lazy: `langchain` and the provider packages are optional; the scripted model needs none.
    ({ initChatModel } = (await import('langchain/chat_models/universal')) as unknown as {
      initChatModel: (model: string) => Promise<unknown>;
    });
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Model "${spec}" needs the "langchain" package; install it (npm install langchain) and the provider package.`,
      { cause: error, details: { model: spec, problems: [] } },
    );
  }
  try {
    return (await initChatModel(spec)) as BaseChatModel;
  } catch (error) {
    const provider = spec.split(':')[0] ?? '';
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Cannot create model "${spec}": ${errorMessage(error)}. Install the provider package (e.g. npm install @langchain/${provider}) and set its API key.`,
      { cause: error, details: { model: spec, problems: [] } },
    );
  }
}
