import type { Command, CommandEntry } from '../command.js';
import type { OpenThreadContext } from '../../actors/open-thread.js';

/**
 * Every `agents` sub-command, in help order: its words and one-line summary, and how to load it.
 * A command's module (and what it imports) loads only when that command runs or shows its own
 * help, so `agents sandbox diff` does not load the serve, login or delivery code (issue 29:
 * start-up is module count). `test/cli/command-index.test.ts` checks each entry against the
 * command it loads. Add a command by appending an entry here.
 */
export const commands: readonly CommandEntry[] = [
  entry(
    ['init'],
    'Write a working .agents/ (filesystem server, skill, actor) and print the next steps',
    async () => (await import('./init.js')).initCommand,
  ),
  entry(
    ['chat'],
    'Talk with an actor on one thread: a turn per line, approvals, /diff, /undo inline',
    async () => (await import('./chat.js')).chatCommand,
  ),
  entry(['server', 'add'], 'Register an MCP server (validated first)', servers),
  entry(['server', 'list'], 'List registered servers', servers),
  entry(
    ['server', 'remove'],
    'Remove a server (refused while others use it, unless --force)',
    servers,
  ),
  entry(['server', 'test'], 'Start a server, handshake, list its tools, stop it', servers),
  entry(
    ['server', 'login'],
    'Log in to a remote server with OAuth (tokens kept per user, 0600)',
    servers,
  ),
  entry(['server', 'logout'], 'Forget the OAuth tokens stored for a remote server', servers),
  entry(
    ['server', 'import'],
    'Import servers from Claude Desktop, Cursor or VS Code (secrets become ${VAR})',
    servers,
  ),
  entry(['tool', 'add'], 'Register a tool resource (server + tool), validated first', tools),
  entry(['tool', 'list'], 'List tool resources and built-in tools', tools),
  entry(['tool', 'show'], 'Show a tool: capabilities and where they come from', tools),
  entry(
    ['tool', 'call'],
    'Call one tool of a server by hand, through the policy and the audit log',
    tools,
  ),
  entry(
    ['tool', 'trust'],
    "Record a review of a server's tool annotations (re-asked when a definition changes)",
    tools,
  ),
  entry(['tool', 'enable'], 'Enable a tool resource', tools),
  entry(['tool', 'disable'], 'Disable a tool resource', tools),
  entry(['tool', 'remove'], 'Remove a tool (refused while others use it, unless --force)', tools),
  entry(
    ['skill', 'add'],
    'Create a skill from tools, servers and Agent Skills (validated first)',
    skills,
  ),
  entry(['skill', 'list'], 'List skills', skills),
  entry(['skill', 'show'], 'Show a skill and its resolved tools', skills),
  entry(
    ['skill', 'remove'],
    'Remove a skill (refused while others use it, unless --force)',
    skills,
  ),
  entry(['actor', 'add'], 'Create an actor from skills', actors),
  entry(['actor', 'list'], 'List actors', actors),
  entry(
    ['actor', 'run'],
    'Run an actor on one input, streaming tool calls and asking for approvals',
    actors,
  ),
  entry(
    ['actor', 'resume'],
    "Answer a paused approval (approve, reject or edit) or a server's question, and continue the run",
    actors,
  ),
  entry(
    ['actor', 'remove'],
    'Remove an actor (refused while others use it, unless --force)',
    actors,
  ),
  entry(['checkpoints'], "List a thread's checkpoints and the files each one changed", async () =>
    (await import('./checkpoints.js')).createCheckpointsCommand(await readThread()),
  ),
  entry(
    ['rollback'],
    'Roll a thread back to a checkpoint, files and state together (or undo a rollback)',
    async () => (await import('./rollback.js')).createRollbackCommand(await changeThread()),
  ),
  entry(
    ['sandbox', 'diff'],
    "Show what a thread's run changed in its sandbox (names, stat or full diff)",
    async () => (await import('./sandbox.js')).createSandboxDiffCommand(await readThread()),
  ),
  entry(
    ['sandbox', 'apply'],
    "Take a thread's work into your working tree (three-way merge; --undo puts it back)",
    async () => (await import('./sandbox-apply.js')).createSandboxApplyCommand(await readThread()),
  ),
  entry(
    ['sandbox', 'commit'],
    "Put a thread's work on a new branch of your repo (HEAD, index and files untouched)",
    async () =>
      (await import('./sandbox-commit.js')).createSandboxCommitCommand(await readThread()),
  ),
  entry(
    ['thread', 'compact'],
    "Delete a thread's old checkpoints, keeping the newest N (bounds SQLite storage)",
    async () =>
      (await import('./thread-compact.js')).createThreadCompactCommand(await changeThread()),
  ),
  entry(
    ['thread', 'replay'],
    'Replay a recorded run offline (no model, no server) and compare its trees',
    async () => (await import('./thread-replay.js')).threadReplayCommand,
  ),
  entry(
    ['thread', 'remove'],
    'Remove a thread: its sandbox, checkpoints and audit entries (asks, unless --yes)',
    async () => (await import('./thread-remove.js')).threadRemoveCommand,
  ),
  entry(
    ['sandbox', 'list'],
    'List the kept sandboxes: thread, actor, size, age, last run',
    async () => (await import('./sandbox-list.js')).sandboxListCommand,
  ),
  entry(
    ['sandbox', 'prune'],
    'Remove sandboxes idle for longer than an age (default 7d); --dry-run lists them',
    async () => (await import('./sandbox-list.js')).sandboxPruneCommand,
  ),
  entry(
    ['sandbox', 'remove'],
    "Delete a thread's sandbox (its tree and snapshots)",
    async () => (await import('./sandbox-remove.js')).sandboxRemoveCommand,
  ),
  entry(
    ['serve'],
    "Serve a skill's or an actor's tools as an MCP server (stdio or HTTP)",
    async () => {
      const [{ createServeCommand }, { resolveServeTarget }] = await Promise.all([
        import('./serve.js'),
        import('../serve-target.js'),
      ]);
      return createServeCommand({ resolve: resolveServeTarget });
    },
  ),
  entry(
    ['mcp-client'],
    'Connect to an MCP server over streamable HTTP, list its tools (call them if told)',
    async () => (await import('./mcp-client.js')).mcpClientCommand,
  ),
  entry(
    ['audit'],
    'Show the audit log of tool calls (decisions, approvals, changes).',
    async () => (await import('./audit.js')).auditCommand,
  ),
  entry(
    ['doctor'],
    'Check the environment; stop the MCP servers that killed runs left running',
    async () => (await import('./doctor.js')).doctorCommand,
  ),
];

function entry(
  path: string[],
  summary: string,
  load: () => Promise<Command | readonly Command[]>,
): CommandEntry {
  return {
    path,
    summary,
    async load() {
      const loaded = await load();
      const found = (Array.isArray(loaded) ? loaded : [loaded]).find(
        (command: Command) => command.path.join(' ') === path.join(' '),
      );
      if (found === undefined)
        throw new Error(`agents: no command "${path.join(' ')}" in its module`);
      return found;
    },
  };
}

async function servers(): Promise<readonly Command[]> {
  return (await import('./server.js')).serverCommands;
}
async function tools(): Promise<readonly Command[]> {
  return (await import('./tool.js')).toolCommands;
}
async function skills(): Promise<readonly Command[]> {
  return (await import('./skill.js')).skillCommands;
}
async function actors(): Promise<readonly Command[]> {
  return (await import('./actor.js')).actorCommands;
}

/** Reads a thread (checkpoints, sandbox diff): works while the thread runs. */
async function readThread(): Promise<OpenThreadContext> {
  return (await import('./record-thread-listing.js')).threadOpener(false);
}
/** Changes a thread (rollback): holds the thread's sandbox lock, refused while it runs. */
async function changeThread(): Promise<OpenThreadContext> {
  return (await import('./record-thread-listing.js')).threadOpener(true);
}
