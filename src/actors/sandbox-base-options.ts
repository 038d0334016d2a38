import type { SandboxFrom, SandboxWarning } from '../sandbox/base-origin.js';

/** What an actor passes to `createSandbox` / `openThreadSandbox` about its sandbox's base. */
export interface SandboxBaseOptions {
  from?: SandboxFrom;
  revision?: string;
  onSandboxWarning: (warning: SandboxWarning) => void;
}

/**
 * The base options of an actor's sandbox: `from` given to `createActor` (or `--from`) wins over
 * the config's `sandbox.from`, then its older `sandbox.revision`; the default is `worktree`
 * (decided by `createSandbox`). Warnings about the base go to `onSandboxWarning` as data, and
 * as a sentence to `onWarning`; with neither, to `process.emitWarning` (type
 * `AgentsSandboxWarning`), so they are never silent.
 */
export function sandboxBaseOptions(
  settings: { from?: string | undefined; revision?: string | undefined },
  options: {
    sandboxFrom?: SandboxFrom | undefined;
    onSandboxWarning?: ((warning: SandboxWarning) => void) | undefined;
    onWarning?: ((message: string) => void) | undefined;
  },
): SandboxBaseOptions {
  const from = options.sandboxFrom ?? settings.from;
  return {
    ...(from === undefined ? {} : { from }),
    ...(settings.revision === undefined ? {} : { revision: settings.revision }),
    onSandboxWarning: (warning) => {
      options.onSandboxWarning?.(warning);
      if (options.onWarning) options.onWarning(warning.message);
      else if (!options.onSandboxWarning)
        process.emitWarning(warning.message, {
          type: 'AgentsSandboxWarning',
          code: warning.code,
        });
    },
  };
}
