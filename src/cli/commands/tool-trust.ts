import { readFile } from 'node:fs/promises';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { ToolDescriptor } from '../../core/tool-descriptor.js';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { parseCommandLine, requirePositional, storeOf } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import { formatTable, printJson, println } from '../output.js';

const TRUST_USAGE = `Usage: agents tool trust SERVER [--tool NAME]... [--json]

Records that you reviewed a server's tool annotations (readOnlyHint, destructiveHint,
openWorldHint): the server is started, each tool's annotations are shown, and the tool's
definition fingerprint is written to servers/SERVER.yaml (trustedTools). From then on those
annotations count as if the server were trusted (e.g. readOnlyHint: true lets a tool run without
approval in ask mode), but only while the definition is unchanged: a changed tool is untrusted
again, with a warning, until you run this again.

Options:
  --tool NAME   review only this tool (repeatable; default: every tool of the server)`;

function hints(descriptor: ToolDescriptor): string {
  const annotations = (descriptor.annotations ?? {}) as Record<string, unknown>;
  const shown = ['readOnlyHint', 'destructiveHint', 'openWorldHint']
    .filter((key) => annotations[key] !== undefined)
    .map((key) => `${key}=${JSON.stringify(annotations[key])}`);
  return shown.join(' ') || '(no annotations)';
}

/**
 * Writes `trustedTools` entries into a server record, keeping the rest of the file (comments,
 * order) as the user wrote it.
 */
export async function recordTrustedTools(
  context: CommandContext,
  serverName: string,
  tools: readonly ToolDescriptor[],
): Promise<string> {
  const store = storeOf(context);
  const file = store.file('server', serverName);
  const { parseDocument } = await import('yaml');
  const document = parseDocument(await readFile(file, 'utf8'));
  for (const tool of tools) document.setIn(['trustedTools', tool.originalName], tool.fingerprint);
  const text = document.toString();
  // Validated as any record is before it is written.
  const { ServerConfigSchema } = await import('../../config/server-schema.js');
  const { parseYaml } = await import('../../config/load.js');
  parseYaml(text, ServerConfigSchema, { file });
  await writeFileAtomic(file, text);
  return file;
}

export const toolTrust: Command = {
  path: ['tool', 'trust'],
  usage: TRUST_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      { tool: { type: 'string', multiple: true } },
      TRUST_USAGE,
    );
    const serverName = requirePositional(positionals, 'SERVER', TRUST_USAGE);
    const store = storeOf(context);
    const config = await store.get('server', serverName);
    const { probeServer } = await import('./server.js');
    const probe = await probeServer(
      store.resolveServer({ ...config, name: serverName }),
      store,
      context,
    );
    const wanted = values.tool;
    const tools =
      wanted === undefined
        ? probe.tools
        : probe.tools.filter((tool) => wanted.includes(tool.originalName));
    const missing = (wanted ?? []).filter(
      (name) => !probe.tools.some((tool) => tool.originalName === name),
    );
    if (missing.length > 0) {
      throw new AgentsError(
        AgentsErrorCode.ToolNotFound,
        `Server "${serverName}" has no tool ${missing.map((name) => `"${name}"`).join(', ')}; it has: ${probe.tools.map((tool) => tool.originalName).join(', ') || 'none'}.`,
        { details: { serverName, missing } },
      );
    }
    const file = await recordTrustedTools(context, serverName, tools);
    if (context.json) {
      printJson(context.stdout, {
        server: serverName,
        file,
        trusted: tools.map((tool) => ({
          tool: tool.originalName,
          fingerprint: tool.fingerprint,
          annotations: tool.annotations ?? null,
        })),
      });
    } else {
      println(
        context.stdout,
        formatTable(
          ['TOOL', 'ANNOTATIONS (now trusted)', 'FINGERPRINT'],
          tools.map((tool) => [tool.originalName, hints(tool), tool.fingerprint.slice(0, 12)]),
        ),
      );
      println(context.stdout, `Recorded ${tools.length} reviewed tool(s) in ${file}.`);
    }
    return 0;
  },
};
