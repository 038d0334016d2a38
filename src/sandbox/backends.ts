import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { SandboxBackend } from './backend.js';
import { gitSandboxBackend } from './git/git-backend.js';
import { memorySandboxBackend } from './memory/memory-backend.js';

/**
 * Every sandbox backend by `sandbox.backend` name. A new one (a container runtime, a remote VM)
 * is one module implementing {@link SandboxBackend}, one entry here and its settings schema in
 * `settings.ts`: the config schema, the runtime and the contract suite follow from them.
 */
export const SANDBOX_BACKENDS = {
  git: gitSandboxBackend,
  memory: memorySandboxBackend,
} as const satisfies Record<string, SandboxBackend>;

/** A backend's name. */
export type SandboxBackendName = keyof typeof SANDBOX_BACKENDS;

/** The sandbox backend a config without `sandbox.backend` gets. */
export const DEFAULT_SANDBOX_BACKEND = 'git' satisfies SandboxBackendName;

/**
 * The backend called `name`, or `CONFIG_INVALID` naming the known ones (`owner`, when given,
 * says whose config named it).
 */
export function sandboxBackend(name: string, owner?: string): SandboxBackend {
  const backends = SANDBOX_BACKENDS as Record<string, SandboxBackend>;
  const backend = Object.hasOwn(backends, name) ? backends[name] : undefined;
  if (backend === undefined) {
    const known = Object.keys(SANDBOX_BACKENDS);
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `${owner === undefined ? '' : `${owner}: `}unknown sandbox backend "${name}" (sandbox.backend); use one of: ${known.join(', ')}.`,
      {
        details: { problems: [`sandbox.backend: unknown backend "${name}"`], backend: name, known },
      },
    );
  }
  return backend;
}

/** The `sandbox.backend` entry of the config reference, from the table. */
export function describeSandboxBackends(): string {
  const entries = Object.values(SANDBOX_BACKENDS as Record<string, SandboxBackend>).map(
    (backend) =>
      `\`${backend.name}\`${backend.name === DEFAULT_SANDBOX_BACKEND ? ' (default)' : ''}: ${backend.description}`,
  );
  return `Where the sandbox lives: ${entries.join('; ')}. An unknown name is refused at activation with the known ones.`;
}
