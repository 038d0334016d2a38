/**
 * The `toolId` of a change record no tool call made (see `recordUnattributedChanges`). Its own
 * module: `agents checkpoints` reads it without loading zod (issue 29).
 */
export const UNATTRIBUTED_TOOL_ID = 'agents:unattributed-changes';
