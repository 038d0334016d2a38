import type { CommandContext } from './command.js';
import type { ServeResolution, ServeTarget } from './commands/serve.js';
import { storeOf } from './args.js';

/**
 * Turns `agents serve --skill NAME` / `--actor NAME` into served tools. A skill serves its
 * flattened tools without a sandbox; an actor is activated (servers, sandbox) and serves its
 * tools through the same middleware chain its graph uses.
 */
export async function resolveServeTarget(
  target: ServeTarget,
  context: CommandContext,
): Promise<ServeResolution> {
  const store = storeOf(context);
  if (target.kind === 'skill') {
    const { activateSkills } = await import('../actors/activate-skills.js');
    const active = await activateSkills({
      store,
      skills: [target.name],
      cwd: context.cwd,
      signal: context.signal,
      onWarning: (message) => context.stderr.write(`warning: ${message}\n`),
    });
    return {
      entries: () => active.registry.entries(),
      subscribe: (listener) => active.registry.on('change', () => listener()),
      close: () => active.close(),
    };
  }
  const { createActor } = await import('../actors/actor.js');
  const actor = await createActor({
    name: target.name,
    workspace: store,
    onWarning: (message) => context.stderr.write(`warning: ${message}\n`),
  });
  try {
    await actor.activate({ signal: context.signal });
  } catch (error) {
    await actor.deactivate();
    throw error;
  }
  return {
    entries: () => actor.entries(),
    middleware: actor.middleware(),
    subscribe: (listener) => actor.onToolsChanged(listener),
    close: () => actor.deactivate(),
  };
}
