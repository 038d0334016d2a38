import type { Command } from '../command.js';
import { createListCommand } from '../list-command.js';
import { createRemoveCommand } from '../remove-command.js';
import { actorAddCommand } from './actor-add.js';
import { actorResumeCommand } from './actor-resume.js';
import { actorRunCommand } from './actor-run.js';

const LIST_USAGE = `Usage: agents actor list [--json]

Lists the actors of the workspace.`;

const actorList = createListCommand({
  kind: 'actor',
  usage: LIST_USAGE,
  headers: ['NAME', 'SKILLS', 'MODEL', 'SANDBOX', 'DESCRIPTION'],
  rows: (records) =>
    records.map((record) => [
      record.name,
      record.value.skills.join(','),
      record.value.model,
      record.value.sandbox.enabled ? record.value.sandbox.source : 'off',
      record.value.description,
    ]),
});

/** `agents actor add|list|run|resume|remove`, one module each (their work loads on use). */
export const actorCommands: readonly Command[] = [
  actorAddCommand,
  actorList,
  actorRunCommand,
  actorResumeCommand,
  // Nothing refers to an actor; its threads' sandboxes stay until `agents sandbox remove`.
  createRemoveCommand('actor', () => Promise.resolve([])),
];
