/**
 * Each sandbox backend's part of the `sandbox:` block (`from`, `revision`, `maxFileBytes`,
 * `exclude`), validated when a config is read. Kept apart from the backends (as the confinement
 * settings are) so that opening a sandbox loads no zod: the read-only commands stay light. A new
 * backend adds its schema here beside its entry in `SANDBOX_BACKENDS`.
 */
import { z } from 'zod';
import type { SandboxBackendSettings } from './backend.js';
import type { SandboxBackendName } from './backends.js';

/** What the git backend takes of the `sandbox:` block (the other keys are not the backend's). */
const GitSandboxSettingsSchema = z.strictObject({
  from: z.string().min(1).optional(),
  revision: z.string().min(1).optional(),
  maxFileBytes: z.number().int().nonnegative().optional(),
  exclude: z.array(z.string().min(1)).optional(),
});

/**
 * What the memory backend takes of the `sandbox:` block: it copies the source folder as it is
 * (`from: worktree` only) and keeps every file (no size cap or excludes to apply).
 */
const MemorySandboxSettingsSchema = z.strictObject({
  from: z
    .literal('worktree', {
      error:
        'the memory backend copies your files as they are; use the git backend for `head` or a revision',
    })
    .optional(),
  maxFileBytes: z.number().int().nonnegative().optional(),
  exclude: z.array(z.string().min(1)).optional(),
});

/** The settings schema of every backend of `SANDBOX_BACKENDS`, by name. */
const SANDBOX_BACKEND_SETTINGS: Record<SandboxBackendName, z.ZodType<SandboxBackendSettings>> = {
  git: GitSandboxSettingsSchema,
  memory: MemorySandboxSettingsSchema,
};

/**
 * What the backend `settings.backend` names refuses of the `sandbox:` block (its own schema
 * reads the backend-dependent keys), as `key: message` lines; none for an unknown backend (the
 * runtime refuses that name) or settings it accepts.
 */
export function sandboxSettingsProblems(
  settings: SandboxBackendSettings & { backend: string },
): string[] {
  if (!Object.hasOwn(SANDBOX_BACKEND_SETTINGS, settings.backend)) return [];
  const { from, revision, maxFileBytes, exclude } = settings;
  const picked = Object.fromEntries(
    Object.entries({ from, revision, maxFileBytes, exclude }).filter(([, v]) => v !== undefined),
  );
  const parsed = SANDBOX_BACKEND_SETTINGS[settings.backend as SandboxBackendName].safeParse(picked);
  if (parsed.success) return [];
  return parsed.error.issues.map(
    (issue) =>
      `${issue.path.join('.') || '(root)'}: ${issue.code === 'unrecognized_keys' ? `the ${settings.backend} sandbox backend does not take ${issue.keys.join(', ')}` : issue.message}`,
  );
}
