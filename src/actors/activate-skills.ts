import { planSkillConfigs } from '../skills/skill-plan.js';
import type { NamedSkill } from '../skills/skill-plan.js';
import { createSkillRegistry } from '../skills/skill-registry.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import { createPathMap } from '../sandbox/path-map.js';
import { createAgentsRuntime } from '../runtime/agents-runtime.js';
import type { ConfineMode } from '../confinement/backend.js';
import { inspectionSandbox } from './inspection-servers.js';
import type { ServerLogger } from '../servers/server-logger.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';

/** Options for {@link activateSkills}. */
export interface ActivateSkillsOptions {
  store: WorkspaceStore;
  /** Skill names (read from the workspace) or skill values (e.g. one being validated). */
  skills: ReadonlyArray<string | NamedSkill>;
  /**
   * Root of the built-in file tools (default: the project). Stdio servers never run here: they
   * run confined in an empty throwaway folder.
   */
  cwd?: string;
  /** Confinement of the servers; default `required` when an actor of the workspace requires it, else `auto`. */
  confine?: ConfineMode;
  signal?: AbortSignal;
  logger?: ServerLogger;
  onWarning?: (message: string) => void;
}

/** Skills whose servers are running: the flattened tools, until `close()`. */
export interface ActiveSkills extends AsyncDisposable {
  readonly registry: SkillRegistry;
  /** Stops the servers. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the servers of some skills (in parallel) and flattens their tools, without a sandbox
 * or a graph: for validating a skill, showing its tools, or serving it over MCP. Throws the
 * resolution errors of ADR-0027 "AEP tool contributions resolve to MCP"; on failure nothing is
 * left running.
 */
export async function activateSkills(options: ActivateSkillsOptions): Promise<ActiveSkills> {
  const { store } = options;
  const skills: NamedSkill[] = [];
  for (const skill of options.skills)
    skills.push(typeof skill === 'string' ? await store.get('skill', skill) : skill);
  const plan = await planSkillConfigs(store, skills);
  const cwd = options.cwd ?? store.projectDir;
  // The servers run confined in an empty throwaway folder, never in the project (see
  // `inspectionSandbox`); `cwd` roots the built-in file tools only.
  // The servers and what they run in, closed in one order: registry, lease, servers, folder.
  const runtime = await createAgentsRuntime({
    owner: 'activateSkills',
    checkpointer: false,
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
  });
  try {
    const sandbox = await inspectionSandbox({
      store,
      servers: plan.servers,
      ...(options.confine === undefined ? {} : { mode: options.confine }),
      ...(options.onWarning ? { report: options.onWarning } : {}),
    });
    runtime.defer(() => sandbox.dispose());
    const manager = await runtime.serverManager({
      cwd: sandbox.dir,
      confinement: sandbox.confinement,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    const lease =
      plan.servers.length === 0
        ? undefined
        : await manager.acquire(plan.servers, options.signal ? { signal: options.signal } : {});
    if (lease !== undefined) runtime.defer(() => lease.release());
    const registry = await createSkillRegistry({
      plan,
      servers: new Map((lease?.servers ?? []).map((server) => [server.name, server])),
      paths: () => createPathMap(cwd),
      projectDir: store.projectDir,
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    });
    runtime.defer(() => registry.close());
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => (closing ??= runtime.close('Stopping the skills'));
    return { registry, close, [Symbol.asyncDispose]: close };
  } catch (error) {
    await runtime.close().catch(() => {});
    throw error;
  }
}
