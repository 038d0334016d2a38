import { ActorSchema } from '../config/actor-schema.js';
import type { Actor as ActorConfig } from '../config/actor-schema.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import type { CreateActorOptions } from './actor-types.js';

/**
 * The config `createActor` runs: `options.config` checked against the actor schema, else
 * `actors/NAME.yaml` of the workspace. Throws `CONFIG_INVALID` naming each problem.
 */
export async function readActorConfig(
  store: WorkspaceStore,
  options: CreateActorOptions,
): Promise<ActorConfig & { name: string }> {
  if (options.config) {
    const parsed = ActorSchema.safeParse(options.config);
    if (!parsed.success) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Actor config "${options.config.name}" is invalid; fix it and retry:\n${parsed.error.issues
          .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
          .join('\n')}`,
        { cause: parsed.error, details: { problems: [] } },
      );
    }
    return { ...parsed.data, name: options.config.name };
  }
  if (options.name) return store.get('actor', options.name);
  throw new AgentsError(AgentsErrorCode.ConfigInvalid, 'createActor needs a config or a name.', {
    details: { problems: [] },
  });
}
