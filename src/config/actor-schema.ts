/** The actor schema and its settings: sandbox, checkpointer, shared snapshots, output budget. */
import { DURATION_PATTERN } from './duration.js';
import { NetworkSettingSchema } from './network-schema.js';
import { z } from 'zod';
import { CheckpointerSettingsSchema } from '../checkpoint/backends.js';
import { ConfinementBackendSettingsSchema } from '../confinement/settings.js';
import { DEFAULT_SANDBOX_BACKEND, describeSandboxBackends } from '../sandbox/backends.js';
import { sandboxSettingsProblems } from '../sandbox/settings.js';
// The policy schema lives with the policy code; it imports only zod and errors (no cycle).
import { PolicySchema } from './policy-schema.js';

export const SandboxSettingsSchema = z
  .strictObject({
    source: z.string().default('.').describe('Folder or git repo the sandbox is made from.'),
    from: z
      .string()
      .min(1)
      .optional()
      .describe(
        'What the sandbox starts from: `worktree` (default: your files as they are now, uncommitted edits and untracked, not ignored files included; your repo is only read), `head` (the last commit; warns once when your tree has uncommitted changes), or a branch, tag or sha. A thread keeps the base of its first run.',
      ),
    revision: z
      .string()
      .min(1)
      .optional()
      .describe('Older spelling of `from` for a revision (`HEAD` = `head`); `from` wins.'),
    enabled: z.boolean().default(true),
    backend: z.string().min(1).default(DEFAULT_SANDBOX_BACKEND).describe(describeSandboxBackends()),
    maxFileBytes: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'Files bigger than this (bytes) are left out of snapshots, with a warning; rollback never touches them. Default 50 MiB; 0 turns the cap off.',
      ),
    exclude: z
      .array(z.string().min(1))
      .optional()
      .describe(
        'Extra gitignore patterns left out of every snapshot (never captured, never removed by a rollback).',
      ),
    confine: z
      .enum(['auto', 'required', 'off'])
      .default('auto')
      .describe(
        'OS confinement of stdio servers (bubblewrap on Linux; `confinement` chooses the backend): the sandbox writable, the rest of the file system read-only, the project and workspace hidden behind the sandbox. `auto` confines where it can and says once when it cannot; `required` refuses to start servers unconfined; `off` never confines.',
      ),
    confinement: ConfinementBackendSettingsSchema.optional(),
    network: NetworkSettingSchema.default(true),
  })
  // The backend-dependent keys are its own schema's to judge (`sandbox/settings.ts`).
  .superRefine((settings, context) => {
    for (const message of sandboxSettingsProblems(settings))
      context.addIssue({ code: 'custom', message });
  })
  .describe('Sandbox settings.');

/**
 * A snapshot store shared by several workers (`snapshots:` beside `checkpointer:`): after each
 * tracked write the thread's snapshot is pushed there, so any worker can rebuild the thread's
 * sandbox, resume it or roll it back.
 */
export const SharedSnapshotsSettingsSchema = z
  .strictObject({
    remote: z
      .string()
      .min(1)
      .refine((value) => !value.startsWith('-') && !value.includes('\0'), {
        message: 'must be a git URL or a path (not starting with "-")',
      })
      .describe(
        'A git remote every worker can reach: a bare repository on shared storage (a path, ' +
          'relative to the project) or a git URL (ssh://, https://, file://). Snapshots go under ' +
          '`refs/agents/projects/<project>/threads/<actor>/<thread>/` there (`refs/agents/threads/<actor>/<thread>/` ' +
          'for a project outside git without `.agents/project-id`).',
      ),
  })
  .describe('Shared snapshot store for threads that move between workers.');
export type SharedSnapshotsSettings = z.infer<typeof SharedSnapshotsSettingsSchema>;

/** Caps on one tool result as the model sees it (bytes, and an estimated token count). */
export const OutputBudgetLimitsSchema = z
  .strictObject({
    maxBytes: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Bytes of text (UTF-8) the model sees of one result (default 32768).'),
    maxTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Estimated tokens (bytes / 4) the model sees; the smaller of the two caps applies.',
      ),
    maxImageBytes: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Decoded bytes of one image; bigger images become a marker (default 1 MiB).'),
    maxItems: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Content items kept per result (default 100).'),
  })
  .describe('Output budget limits.');
export type OutputBudgetLimitsSettings = z.infer<typeof OutputBudgetLimitsSchema>;

/** An actor's output budget: default limits plus per-tool limits. */
export const OutputBudgetSettingsSchema = OutputBudgetLimitsSchema.extend({
  perTool: z
    .record(z.string(), OutputBudgetLimitsSchema)
    .optional()
    .describe(
      'Limits per tool id or name (globs allowed); they replace the defaults field by field.',
    ),
}).describe(
  'Caps on what the model sees of each tool result; the cut part is written to a file in the sandbox.',
);
export type OutputBudgetSettings = z.infer<typeof OutputBudgetSettingsSchema>;

/** Model turns one actor run may take before it pauses (the `maxTurns` default). */
export const DEFAULT_MAX_TURNS = 200;

/** An actor: skills + model + instructions + sandbox + checkpointer. */
export const ActorSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-zA-Z0-9_-]{1,64}$/)
      .optional(),
    description: z.string().default(''),
    skills: z.array(z.string()).min(1),
    model: z
      .string()
      .default('scripted')
      .describe(
        '`provider:model` (e.g. `openai:gpt-4.1-mini`; install the provider package), or ' +
          '`scripted:path/to/script.yaml` (an offline model replaying a YAML list of turns ' +
          '`{ content?, tool_calls?: [{ name, args }] }`, path relative to the project). Bare ' +
          '`scripted` (the default) means `.agents/actors/NAME.script.yaml`.',
      ),
    instructions: z.string().default(''),
    sandbox: SandboxSettingsSchema.default({
      source: '.',
      enabled: true,
      backend: DEFAULT_SANDBOX_BACKEND,
      confine: 'auto',
      network: true,
    }),
    checkpointer: CheckpointerSettingsSchema.default({
      type: 'sqlite',
      path: '.agents/checkpoints.sqlite',
    }),
    snapshots: SharedSnapshotsSettingsSchema.optional(),
    policy: PolicySchema.optional().describe(
      'Safety policy: which tool calls run, which wait for approval, which are refused. ' +
        'Without it: mode ask (read-only tools run, every other call waits for approval).',
    ),
    budget: OutputBudgetSettingsSchema.optional().describe(
      'Output budget for tool results (default: 32 KiB of text per result).',
    ),
    maxTurns: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(DEFAULT_MAX_TURNS)
      .describe(
        'Model turns one run may take (each turn: one model call and the tool calls it asks ' +
          'for, parallel or not). At the limit the run pauses with a message and a saved thread ' +
          '(`agents actor resume NAME --thread ID --continue` goes on); `--max-turns` overrides it.',
      ),
    record: z
      .union([z.boolean(), z.string().min(1)])
      .optional()
      .describe(
        'Record every `agents actor run|resume` of this actor into a cassette (docs/replay.md), as ' +
          '`--record` does: true for THREAD.cassette.jsonl in the current folder, or a path ' +
          '(relative to the current folder). `--record PATH` wins. Default: not recorded.',
      ),
    maxToolCalls: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Tool calls one run may make. Checked before each model turn: the run pauses like at ' +
          '`maxTurns` once it has made this many (the parallel calls of its last turn all run, ' +
          'so it can go over by one turn); `--max-tool-calls` overrides it. Default: no limit.',
      ),
    maxTimeMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Wall time one run may take, in milliseconds (600000 = 10 minutes). Checked before ' +
          'each model turn (a running tool call is not cut off): past it the run pauses like at ' +
          '`maxTurns`; `--max-time` overrides it. Default: no limit.',
      ),
    maxTime: z
      .union([z.number().positive(), z.string().regex(DURATION_PATTERN)])
      .optional()
      .meta({ deprecated: true })
      .describe(
        'Deprecated: use `maxTimeMs`. Wall time as 90s, 10m, 1h, 500ms or a number of ' +
          'seconds; still read, with a deprecation warning. Setting both is an error.',
      ),
  })
  .describe('An actor.');
export type Actor = z.infer<typeof ActorSchema>;
