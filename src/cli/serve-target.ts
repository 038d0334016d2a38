import type { ActorConfigInput, ActorInstance } from '../actors/actor-types.js';
import type { PolicyInput } from '../config/policy-schema.js';
import type { ToolEntry } from '../core/tool-descriptor.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import { storeOf } from './args.js';
import type { CommandContext } from './command.js';
import type {
  ServeResolution,
  ServeSandboxInfo,
  ServeTarget,
  ServeTargetOptions,
} from './commands/serve.js';

/**
 * Turns `agents serve --skill NAME` / `--actor NAME` into served tools. Both run as an actor, so
 * a served call goes through the chain a graph uses (audit, allowed-tools, policy, output budget,
 * path rewriting, change tracking) in a sandbox: an actor with its own config, a skill as a
 * one-skill actor with the defaults (a sandbox of the project folder, the default policy, a memory
 * checkpointer: nothing of a served skill needs checkpoints). The model is never made: serving
 * does not run the graph. Tools of an upstream server that is not `ready` are not offered.
 */
export async function resolveServeTarget(
  target: ServeTarget,
  context: CommandContext,
  options: ServeTargetOptions,
): Promise<ServeResolution> {
  const store = storeOf(context);
  // Loaded on use, as the rest of serving: `agents --help` and the other commands start without them.
  const { createActor } = await import('../actors/actor.js');
  const policy = await policyFor(target, store, options);
  const actor = await createActor({
    ...(target.kind === 'actor'
      ? {
          name: target.name,
          ...(options.threadId === undefined ? {} : { threadId: options.threadId }),
        }
      : { config: skillActorConfig(target.name) }),
    workspace: store,
    keepSandbox: options.keepSandbox,
    ...(options.from === undefined ? {} : { sandboxFrom: options.from }),
    // Upstream sampling and elicitation are forwarded to the MCP client behind each call.
    forwardClientRequests: true,
    ...(policy === undefined ? {} : { policy }),
    onWarning: (message) => context.stderr.write(`warning: ${message}\n`),
  });
  try {
    await actor.activate({ signal: context.signal });
  } catch (error) {
    await actor.deactivate();
    throw error;
  }
  const servers = actor.servers();
  const isAvailable = (entry: ToolEntry): boolean => {
    const { serverName } = entry.descriptor;
    if (entry.descriptor.source !== 'mcp' || serverName === undefined) return true;
    // `restarting` and `failed` servers are down: their tools come back (with a list_changed)
    // when a restart succeeds.
    return servers.status(serverName) === 'ready';
  };
  // Say on stderr when an upstream goes down or comes back: its tools leave or rejoin the list.
  const say = (line: string): void => void context.stderr.write(`${line}\n`);
  const reporting = [
    servers.on('server-end', (event) => {
      if (event.reason !== 'closed')
        say(
          `upstream server "${event.serverName}" ${event.reason}; its tools are not offered until it restarts`,
        );
    }),
    servers.on('server-start', (event) => {
      if (event.restart)
        say(
          `upstream server "${event.serverName}" restarted${event.pid === undefined ? '' : ` (pid ${event.pid})`}; its tools are offered again`,
        );
    }),
  ];
  // Stops reporting first when the actor stops (its runtime's disposal order).
  actor.runtime?.defer(() => reporting.forEach((off) => off()));
  const serverNames = [
    ...new Set(
      actor
        .entries()
        .flatMap((entry) =>
          entry.descriptor.source === 'mcp' && entry.descriptor.serverName !== undefined
            ? [entry.descriptor.serverName]
            : [],
        ),
    ),
  ];
  return {
    entries: () => actor.entries(),
    middleware: actor.middleware(),
    subscribe: (listener) => {
      const offs = [
        actor.onToolsChanged(listener),
        // A server going down or coming back changes what is available, even when its tool set
        // stays the same.
        servers.on('server-end', () => listener()),
        servers.on('server-restart', () => listener()),
        servers.on('server-start', () => listener()),
      ];
      return () => offs.forEach((off) => off());
    },
    isAvailable,
    sandbox: sandboxInfo(actor, target, options, store),
    policyMode: actor.policy.mode,
    upstream: serverNames.map((serverName) => {
      const pid = servers.pid(serverName);
      return { serverName, ...(pid === undefined ? {} : { pid }) };
    }),
    close: () => actor.deactivate(),
  };
}

/** The one-skill actor a served skill runs as. */
function skillActorConfig(skill: string): ActorConfigInput {
  return {
    // Actor names are narrower than skill names; the audit log shows this one.
    name: `skill-${skill.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64),
    description: `Serves the tools of skill "${skill}" over MCP.`,
    skills: [skill],
    checkpointer: { type: 'memory' },
  };
}

/** `--policy MODE` replaces the mode and keeps the actor's rules; without it, the config's policy. */
async function policyFor(
  target: ServeTarget,
  store: WorkspaceStore,
  options: ServeTargetOptions,
): Promise<PolicyInput | undefined> {
  if (options.policyMode === undefined) return undefined;
  if (target.kind === 'skill') return { mode: options.policyMode };
  const config = await store.get('actor', target.name);
  const { parsePolicy } = await import('../config/policy-schema.js');
  return {
    ...parsePolicy(config.policy, store.file('actor', target.name)),
    mode: options.policyMode,
  };
}

function sandboxInfo(
  actor: ActorInstance,
  target: ServeTarget,
  options: ServeTargetOptions,
  store: WorkspaceStore,
): ServeSandboxInfo {
  const root = actor.sandbox?.root;
  if (root === undefined) return { root: undefined, kept: false, workDir: store.projectDir };
  // As the actor's runtime decided: a thread's sandbox lasts only when the sandbox backend and
  // the checkpointer both outlive the process.
  const threadSandbox = options.threadId !== undefined && actor.runtime?.ephemeral === false;
  return {
    root,
    kept: options.keepSandbox || threadSandbox,
    ...(threadSandbox ? { threadId: options.threadId } : {}),
    ...(options.threadId !== undefined && !threadSandbox
      ? {
          note: `${target.kind} "${target.name}" keeps its thread in memory (a memory checkpointer or sandbox backend), so thread "${options.threadId}" gets a temporary sandbox.`,
        }
      : {}),
  };
}
