/** How a server is started, for a progress line: `fs (npx -y @modelcontextprotocol/server-filesystem .)`. */
export function describeServerStart(config: {
  name: string;
  command?: string | undefined;
  args?: readonly string[] | undefined;
  url?: string | undefined;
}): string {
  const how =
    config.command !== undefined
      ? [config.command, ...(config.args ?? [])].join(' ')
      : (config.url ?? '');
  const shown = how.length > 70 ? `${how.slice(0, 69)}…` : how;
  return shown === '' ? config.name : `${config.name} (${shown})`;
}
