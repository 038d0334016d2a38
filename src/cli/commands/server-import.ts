import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { shellQuote } from '../../config/import-secrets.js';
import type { ImportSource, ImportedServer } from '../../config/import-servers.js';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { parseCommandLine, storeOf, usageError } from '../args.js';
import type { Command } from '../command.js';
import { printJson, println } from '../output.js';

const USAGE = `Usage: agents server import PATH | --from claude|cursor|vscode [--only NAME]... [--dry-run] [--force]

Reads the MCP servers of an existing config and writes one servers/NAME.yaml each, after
printing what it will write. Understands Claude Desktop (claude_desktop_config.json), Cursor
and VS Code mcp.json files and @langchain/mcp-adapters' mcpServers: {command,args,env},
{type: "stdio"}, {url, headers}, {type: "http"} (streamable HTTP) and a url without a type
(streamable HTTP, then SSE).

Secrets are never copied: a literal value of a secret-looking env variable, header or flag
(--token=X, --api-key X), the password of a URL (postgresql://user:PASSWORD@host/db, in an
argument, env value or url) and secret URL parameters (key, token, secret, password, api_key...)
become \${VAR} references, and the \`export\` lines are printed: with the values found only when
the output is a terminal (never into a redirected file, never in --json). Servers are not
started; check each with \`agents server test NAME\` once the variables are set.

  --from APP     claude: the Claude Desktop config of this user; cursor: .cursor/mcp.json of the
                 project, else ~/.cursor/mcp.json; vscode: .vscode/mcp.json of the project
  --only NAME    import only this entry (repeatable; the name in the source file)
  --dry-run      print what would be written, write nothing
  --force        replace servers that already exist here (default: skip them)
  --json         print the result as JSON`;

async function locate(
  path: string | undefined,
  from: string | undefined,
  cwd: string,
): Promise<{ file: string; text: string }> {
  if ((path === undefined) === (from === undefined)) {
    throw usageError('Give a PATH or --from claude|cursor|vscode (one of them).', USAGE);
  }
  if (path !== undefined) {
    const file = resolve(cwd, path);
    return { file, text: await readSource(file) };
  }
  if (from !== 'claude' && from !== 'cursor' && from !== 'vscode') {
    throw usageError(`--from takes claude, cursor or vscode, got "${from}".`, USAGE);
  }
  const { importSourcePaths } = await import('../../config/import-servers.js');
  const candidates = importSourcePaths(from as ImportSource, cwd);
  for (const file of candidates) {
    try {
      return { file, text: await readFile(file, 'utf8') };
    } catch {
      // Try the next place.
    }
  }
  throw new AgentsError(
    AgentsErrorCode.ConfigNotFound,
    `No ${from} MCP config found (looked in ${candidates.join(', ')}); give its PATH instead.`,
    { details: { files: candidates } },
  );
}

async function readSource(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new AgentsError(AgentsErrorCode.ConfigNotFound, `Cannot read ${file}; check the path.`, {
      cause: error,
      details: { file },
    });
  }
}

const serverImport: Command = {
  path: ['server', 'import'],
  usage: USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        from: { type: 'string' },
        only: { type: 'string', multiple: true },
        'dry-run': { type: 'boolean' },
        force: { type: 'boolean' },
      },
      USAGE,
    );
    if (positionals.length > 1) {
      throw usageError(`Unexpected arguments: ${positionals.slice(1).join(' ')}`, USAGE);
    }
    const { file, text } = await locate(positionals[0], values.from, context.cwd);
    // Loaded on use (yaml, zod): `agents --help` should not pay for them.
    const [{ importServers }, { stringify }] = await Promise.all([
      import('../../config/import-servers.js'),
      import('yaml'),
    ]);
    const found = importServers(text, file);
    const only = values.only;
    if (only !== undefined) {
      const unknown = only.filter(
        (key) => !found.servers.some((server) => server.sourceKey === key),
      );
      if (unknown.length > 0) {
        throw usageError(
          `No server ${unknown.map((key) => `"${key}"`).join(', ')} in ${file} (it has: ${found.servers.map((server) => server.sourceKey).join(', ') || 'none'}).`,
          USAGE,
        );
      }
    }
    const chosen = found.servers.filter(
      (server) => only === undefined || only.includes(server.sourceKey),
    );
    const store = storeOf(context);
    const written: { name: string; file: string }[] = [];
    const existing: string[] = [];
    const dryRun = values['dry-run'] === true;
    if (!context.json) {
      println(context.stdout, `From ${file}: ${chosen.length} server(s).`);
      for (const server of chosen)
        printPreview(context.stdout, server, store.file('server', server.name), stringify);
      for (const skipped of found.skipped) {
        println(context.stdout, `skipped "${skipped.sourceKey}": ${skipped.reason}`);
      }
    }
    for (const server of chosen) {
      if (!values.force && (await store.has('server', server.name))) {
        existing.push(server.name);
        continue;
      }
      if (dryRun) continue;
      const path = await store.put('server', server.name, server.config, {
        overwrite: values.force === true,
      });
      written.push({ name: server.name, file: path });
    }
    const variables = [...new Set(chosen.flatMap((server) => server.variables))].sort();
    if (context.json) {
      printJson(context.stdout, {
        file,
        // No secret values in JSON (it ends up in files and logs): `variables` names them.
        servers: chosen,
        skipped: found.skipped,
        written,
        existing,
        variables,
      });
      return 0;
    }
    for (const name of existing) {
      println(context.stdout, `kept servers/${name}.yaml: it exists already (--force replaces it)`);
    }
    println(
      context.stdout,
      dryRun
        ? 'Dry run: nothing written.'
        : `Wrote ${written.length} server(s)${written.length > 0 ? `: ${written.map((entry) => entry.name).join(', ')}` : ''}.`,
    );
    if (variables.length > 0) {
      const secrets = found.secrets;
      // The values only on a terminal: stdout redirected to a file would copy the secrets there.
      const show = (context.stdout as { isTTY?: boolean }).isTTY === true;
      println(
        context.stdout,
        show
          ? 'Before the servers start, export (better: from your secret store; never put these in .agents/):'
          : 'Before the servers start, export (values from your secret store, never from .agents/; the values found are shown only when the output is a terminal):',
      );
      for (const line of exportLines(variables, secrets, show)) println(context.stdout, line);
    }
    return 0;
  },
};

function printPreview(
  out: NodeJS.WritableStream,
  server: ImportedServer,
  target: string,
  stringify: (value: unknown, options: { lineWidth: number }) => string,
): void {
  println(
    out,
    `\n# ${target}${server.sourceKey === server.name ? '' : ` (from "${server.sourceKey}")`}`,
  );
  println(out, stringify(server.config, { lineWidth: 0 }).trimEnd());
  for (const note of server.notes) println(out, `#   note: ${note}`);
}

/**
 * The `export` lines for the variables an import refers to: with the values found in the source
 * when `showValues` (a terminal), else `...` placeholders.
 */
export function exportLines(
  variables: readonly string[],
  secrets: Readonly<Record<string, string>>,
  showValues: boolean,
): string[] {
  return variables.map((variable) => {
    const value = secrets[variable];
    return `  export ${variable}=${showValues && value !== undefined ? shellQuote(value) : '...'}`;
  });
}

/** `agents server import`. */
export const serverImportCommand: Command = serverImport;
