import type { Command } from '../command.js';
import { resolveServeTarget } from '../serve-target.js';
import { actorCommands } from './actor.js';
import { auditCommand } from './audit.js';
import { mcpClientCommand } from './mcp-client.js';
import { createServeCommand } from './serve.js';
import { serverCommands } from './server.js';
import { skillCommands } from './skill.js';
import { toolCommands } from './tool.js';

/**
 * Every `agents` sub-command, in help order. Add a command module by appending it here.
 * (checkpoints, rollback and sandbox diff need a thread opener from the actor layer; see the
 * report: they are wired once sandboxes can be reopened per thread.)
 */
export const commands: readonly Command[] = [
  ...serverCommands,
  ...toolCommands,
  ...skillCommands,
  ...actorCommands,
  createServeCommand({ resolve: resolveServeTarget }),
  mcpClientCommand,
  auditCommand,
];
