import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { parseCommandLine, storeOf } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import { agentsCommandLine, println } from '../output.js';

const USAGE = `Usage: agents init [--model provider:model] [--policy ask|auto|read-only]

Writes a working workspace (.agents/) into the current project, refusing to touch one that
exists: a filesystem MCP server confined to the sandbox (server "fs"), a skill using it ("files")
and an actor ("coder"). The model is --model, else openai:gpt-4.1-mini when OPENAI_API_KEY is set
and @langchain/openai is installed, else an offline scripted model (.agents/actors/coder.script.yaml)
that writes hello.txt, so the whole loop runs without a key. Then it prints the next commands:
a conversation with the actor (agents chat), review, apply.

Options:
  --model M     the actor's model: provider:model (e.g. openai:gpt-4.1-mini) or scripted:PATH
  --policy P    ask (default: writes wait for your approval), auto or read-only`;

const PACKAGE = '@modelcontextprotocol/server-filesystem';
const SCRIPT = `# An offline model: one list item per model turn, replayed for each input.
- tool_calls: [{ name: write_file, args: { path: hello.txt, content: "hello from the agent\\n" } }]
- content: Wrote hello.txt.
`;

/**
 * The filesystem server's command line: the project's own install as written (resolved against
 * the project when it starts), else this package's (absolute), else \`npx -y\` (a download on
 * first start). Its one argument, ".", is the sandbox root: the only folder it may touch.
 */
function filesystemServer(projectDir: string): { command: string; args: string[] } {
  const local = join('node_modules', ...PACKAGE.split('/'), 'dist', 'index.js');
  if (existsSync(join(projectDir, local))) return { command: 'node', args: [local, '.'] };
  try {
    const own = createRequire(import.meta.url).resolve(`${PACKAGE}/dist/index.js`);
    return { command: 'node', args: [own, '.'] };
  } catch {
    return { command: 'npx', args: ['-y', PACKAGE, '.'] };
  }
}

/** The model without --model: a real one only where it can be made, else the offline script. */
function defaultModel(projectDir: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env['OPENAI_API_KEY'] === undefined || env['OPENAI_API_KEY'] === '') return undefined;
  try {
    createRequire(join(projectDir, 'package.json')).resolve('@langchain/openai');
    return 'openai:gpt-4.1-mini';
  } catch {
    return undefined;
  }
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch {
    return true;
  }
}

export const initCommand: Command = {
  path: ['init'],
  usage: USAGE,
  async run(context: CommandContext): Promise<number> {
    const { values } = parseCommandLine(
      context.argv,
      { model: { type: 'string' }, policy: { type: 'string' } },
      USAGE,
    );
    if (!(await isEmptyOrMissing(context.workspace))) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `A workspace already exists at ${context.workspace}; agents init never overwrites one. Add to it with \`agents server add\`, \`agents skill add\` and \`agents actor add\`, or remove the folder to start again.`,
        { details: { problems: [], workspace: context.workspace } },
      );
    }
    const store = storeOf(context);
    const model = values.model ?? defaultModel(context.projectDir, process.env);
    const policy = values.policy ?? 'ask';
    if (!['ask', 'auto', 'read-only'].includes(policy)) {
      const { usageError } = await import('../args.js');
      throw usageError(`--policy takes ask, auto or read-only, got "${policy}".`, USAGE);
    }
    const fs = filesystemServer(context.projectDir);
    await store.put('server', 'fs', { transport: 'stdio', ...fs });
    await store.put('skill', 'files', {
      description: 'Read and write the files of the project (in the sandbox)',
      mcpServers: ['fs'],
    });
    if (model === undefined) {
      await mkdir(store.dir('actor'), { recursive: true });
      await writeFile(join(store.dir('actor'), 'coder.script.yaml'), SCRIPT);
    }
    await store.put('actor', 'coder', {
      skills: ['files'],
      ...(model === undefined ? {} : { model }),
      policy: { mode: policy as 'ask' | 'auto' | 'read-only' },
    });
    const agents = (args: string) => `${agentsCommandLine(context, args.split(' '))}`;
    const where = relative(context.cwd, context.workspace) || '.agents';
    println(
      context.stdout,
      [
        `Wrote ${where}/: server "fs" (${[fs.command, ...fs.args].join(' ')}), skill "files", actor "coder"` +
          ` (model: ${model ?? 'scripted, offline: actors/coder.script.yaml'}; policy: ${policy}).`,
        '',
        'Next:',
        `  ${agents('chat coder --thread t1')}   # type: Write hello.txt (then a to approve; /diff, /undo, /exit)`,
        `  ${agents('sandbox diff --thread t1 --patch')}   # review what it changed`,
        `  ${agents('sandbox apply --thread t1')}   # take the work into your files (--undo puts them back)`,
      ].join('\n'),
    );
    return 0;
  },
};
