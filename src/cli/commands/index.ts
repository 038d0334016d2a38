import type { Command } from '../command.js';
import { resolveServeTarget } from '../serve-target.js';
import { createThreadContextOpener } from '../thread-context.js';
import { actorCommands } from './actor.js';
import { auditCommand } from './audit.js';
import { createCheckpointsCommand } from './checkpoints.js';
import { doctorCommand } from './doctor.js';
import { mcpClientCommand } from './mcp-client.js';
import { createRollbackCommand } from './rollback.js';
import { createSandboxDiffCommand } from './sandbox.js';
import { createSandboxApplyCommand } from './sandbox-apply.js';
import { createSandboxCommitCommand } from './sandbox-commit.js';
import { sandboxListCommand, sandboxPruneCommand } from './sandbox-list.js';
import { sandboxRemoveCommand } from './sandbox-remove.js';
import { createServeCommand } from './serve.js';
import { serverCommands } from './server.js';
import { skillCommands } from './skill.js';
import { toolCommands } from './tool.js';
import { createThreadCompactCommand } from './thread-compact.js';
import { threadRemoveCommand } from './thread-remove.js';

/** Reads a thread (checkpoints, sandbox diff): works while the thread runs. */
const readThread = createThreadContextOpener({ lock: false });
/** Changes a thread (rollback): holds the thread's sandbox lock, refused while it runs. */
const changeThread = createThreadContextOpener({ lock: true });

/** Every `agents` sub-command, in help order. Add a command module by appending it here. */
export const commands: readonly Command[] = [
  ...serverCommands,
  ...toolCommands,
  ...skillCommands,
  ...actorCommands,
  createCheckpointsCommand(readThread),
  createRollbackCommand(changeThread),
  createSandboxDiffCommand(readThread),
  createSandboxApplyCommand(readThread),
  createSandboxCommitCommand(readThread),
  createThreadCompactCommand(changeThread),
  threadRemoveCommand,
  sandboxListCommand,
  sandboxPruneCommand,
  sandboxRemoveCommand,
  createServeCommand({ resolve: resolveServeTarget }),
  mcpClientCommand,
  auditCommand,
  doctorCommand,
];
