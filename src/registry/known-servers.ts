/**
 * Reviewed capability verdicts for the tools of well-known MCP servers, so that their read tools
 * whose names carry no read word (`directory_tree`, `echo`, `open_nodes`, `sequentialthinking`)
 * do not wait for approval in `ask` mode, while annotations of unknown servers stay ignored.
 *
 * How a server is recognised (both must hold):
 * - its launch command line names the package (`npx -y @modelcontextprotocol/server-memory`,
 *   `uvx mcp-server-git`, or a path into the package): what the user chose to run, and
 * - its `serverInfo.name` from `initialize` is the one that package reports.
 * A program that merely calls itself `secure-filesystem-server` is not matched, nor is the real
 * package behind a wrapper that renames it. Remote (HTTP) servers are never matched: their
 * identity is only what they say.
 *
 * Why tool names and not definition fingerprints: the verdict is about what the tool does,
 * which stays the same across the package's releases, while descriptions and schemas (hence
 * fingerprints) change with almost every release; a fingerprint table would be stale within
 * weeks and silently fall back to prompting. A definition that changes while a thread runs is
 * still caught by the pins (`policy/pins.ts`), and this table only ever says "reads": it
 * never overrules write evidence (a write word in the name, `readOnlyHint: false`,
 * `destructiveHint: true`) or a config override.
 *
 * Reviewed against the packages' sources (filesystem 2026.8.31, everything 2026.8.31 as
 * installed here; memory, sequential-thinking, git and fetch from their published sources).
 * Tools left out on purpose: everything's `get-env` (reads secrets from the environment),
 * `gzip-file-as-resource` (fetches URLs), `toggle-*` and `trigger-*-request*` (change server
 * state or ask the user/model); fetch's `fetch` reads but is open-world, which stays `true`.
 */
interface KnownServer {
  /** Text that appears in the launch command line of the package (npm or PyPI name). */
  packageName: string;
  /** `serverInfo.name` the package reports in `initialize`. */
  serverInfoName: string;
  /** Tools reviewed as read-only (no change outside the server's own memory). */
  readOnly: readonly string[];
}

const KNOWN_SERVERS: readonly KnownServer[] = [
  {
    packageName: '@modelcontextprotocol/server-filesystem',
    serverInfoName: 'secure-filesystem-server',
    readOnly: [
      'read_file',
      'read_text_file',
      'read_media_file',
      'read_multiple_files',
      'list_directory',
      'list_directory_with_sizes',
      'directory_tree',
      'search_files',
      'get_file_info',
      'list_allowed_directories',
    ],
  },
  {
    packageName: '@modelcontextprotocol/server-memory',
    serverInfoName: 'memory-server',
    readOnly: ['read_graph', 'search_nodes', 'open_nodes'],
  },
  {
    packageName: '@modelcontextprotocol/server-everything',
    serverInfoName: 'mcp-servers/everything',
    readOnly: [
      'echo',
      'get-sum',
      'get-tiny-image',
      'get-annotated-message',
      'get-structured-content',
      'get-resource-links',
      'get-resource-reference',
      'get-roots-list',
      'trigger-long-running-operation',
    ],
  },
  {
    packageName: '@modelcontextprotocol/server-sequential-thinking',
    serverInfoName: 'sequential-thinking-server',
    readOnly: ['sequentialthinking'],
  },
  {
    packageName: 'mcp-server-git',
    serverInfoName: 'mcp-git',
    readOnly: [
      'git_status',
      'git_diff_unstaged',
      'git_diff_staged',
      'git_diff',
      'git_log',
      'git_show',
      'git_branch',
    ],
  },
  {
    packageName: 'mcp-server-fetch',
    serverInfoName: 'mcp-fetch',
    readOnly: ['fetch'],
  },
];

/** A reviewed verdict for one tool (see the module comment). */
export interface KnownToolVerdict {
  readOnly: true;
  /** Provenance for `tool show` and approval previews. */
  reason: string;
}

/**
 * The reviewed verdicts of the server launched with `commandLine` that reported
 * `serverInfoName`, as a lookup by MCP tool name; undefined when it is not a known server.
 * Called once per tool listing.
 */
export function knownServerVerdicts(
  commandLine: readonly string[],
  serverInfoName: string | undefined,
): ((toolName: string) => KnownToolVerdict | undefined) | undefined {
  if (serverInfoName === undefined) return undefined;
  const server = KNOWN_SERVERS.find(
    (candidate) =>
      candidate.serverInfoName === serverInfoName &&
      commandLine.some((part) => part.includes(candidate.packageName)),
  );
  if (!server) return undefined;
  const readOnly = new Set(server.readOnly);
  const verdict: KnownToolVerdict = {
    readOnly: true,
    reason: `reviewed read-only tool of ${server.packageName} (serverInfo "${serverInfoName}")`,
  };
  return (toolName) => (readOnly.has(toolName) ? verdict : undefined);
}
