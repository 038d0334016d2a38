import { describe, expect, it } from 'vitest';
import { importServers, importSourcePaths } from '../../src/config/import-servers.js';
import { ServerConfigSchema } from '../../src/config/server-schema.js';
import { AgentsError } from '../../src/errors.js';

/** A Claude Desktop config as people have them (claude_desktop_config.json). */
const CLAUDE_DESKTOP = JSON.stringify(
  {
    mcpServers: {
      filesystem: {
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop'],
      },
      github: {
        command: 'docker',
        args: [
          'run',
          '-i',
          '--rm',
          '-e',
          'GITHUB_PERSONAL_ACCESS_TOKEN',
          'ghcr.io/github/github-mcp-server',
        ],
        env: {
          GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_realLookingSecret123',
          GITHUB_TOOLSETS: 'repos,issues',
        },
      },
      'brave search': {
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-brave-search', '--api-key=BSA-literal-key'],
      },
      linear: { command: 'npx', args: ['-y', 'mcp-remote', 'https://mcp.linear.app/sse'] },
      old: { command: 'node', args: ['old.js'], disabled: true },
    },
    globalShortcut: 'Ctrl+Space',
  },
  null,
  2,
);

/** Cursor's mcp.json: `${env:...}` references and remote entries. */
const CURSOR = `{
  "mcpServers": {
    "context7": { "url": "https://mcp.context7.com/mcp", "headers": { "CONTEXT7_API_KEY": "\${env:CONTEXT7_API_KEY}" } },
    "sentry": { "url": "https://mcp.sentry.dev/mcp?token=abc123secret" },
    "local": { "command": "python", "args": ["server.py"], "env": { "API_TOKEN": "plain-secret" } }
  }
}`;

/** VS Code's .vscode/mcp.json: JSON with comments, `inputs`, `type`. */
const VSCODE = `{
  // Inputs are prompted by VS Code; here they become environment variables.
  "inputs": [{ "type": "promptString", "id": "perplexity-key", "password": true }],
  "servers": {
    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": { "Authorization": "Bearer ghp_copied_token" } },
    "perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": { "PERPLEXITY_API_KEY": "\${input:perplexity-key}" },
      "envFile": "\${workspaceFolder}/.env",
    },
    "legacy": { "type": "sse", "url": "http://localhost:3001/sse" },
    /* a block comment */
    "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "\${workspaceFolder}"] },
  },
}`;

/** @langchain/mcp-adapters' MultiServerMCPClient config. */
const LANGCHAIN = JSON.stringify({
  mcpServers: {
    math: {
      transport: 'stdio',
      command: 'node',
      args: ['math.js'],
      restart: { enabled: true, maxAttempts: 3, delayMs: 1000 },
    },
    weather: {
      transport: 'http',
      url: 'https://weather.example.com/mcp',
      automaticSSEFallback: false,
    },
    news: { url: 'https://news.example.com/mcp', reconnect: { enabled: true } },
  },
});

const argsOf = (config: unknown) => (config as { args?: string[] } | undefined)?.args;
const envOf = (config: unknown) => (config as { env?: Record<string, string> } | undefined)?.env;

function byName(text: string, file: string) {
  const result = importServers(text, file);
  return {
    ...result,
    get: (name: string) => result.servers.find((server) => server.name === name),
  };
}

describe('importServers', () => {
  it('translates a Claude Desktop config and never copies a secret', () => {
    const result = byName(CLAUDE_DESKTOP, 'claude_desktop_config.json');
    expect(result.servers.map((server) => server.name)).toEqual([
      'filesystem',
      'github',
      'brave-search',
      'linear',
    ]);
    expect(result.skipped).toEqual([{ sourceKey: 'old', reason: 'disabled in the source' }]);
    expect(result.get('github')?.config).toEqual({
      transport: 'stdio',
      command: 'docker',
      args: [
        'run',
        '-i',
        '--rm',
        '-e',
        'GITHUB_PERSONAL_ACCESS_TOKEN',
        'ghcr.io/github/github-mcp-server',
      ],
      env: {
        GITHUB_PERSONAL_ACCESS_TOKEN: '${GITHUB_PERSONAL_ACCESS_TOKEN}',
        GITHUB_TOOLSETS: 'repos,issues',
      },
    });
    expect(result.get('github')?.variables).toEqual(['GITHUB_PERSONAL_ACCESS_TOKEN']);
    expect(argsOf(result.get('brave-search')?.config)).toEqual([
      '-y',
      '@modelcontextprotocol/server-brave-search',
      '--api-key=${BRAVE_SEARCH_API_KEY}',
    ]);
    expect(JSON.stringify(result.servers)).not.toMatch(/ghp_realLookingSecret123|BSA-literal-key/);
    for (const server of result.servers) {
      expect(ServerConfigSchema.parse(server.config).transport).toBe('stdio');
    }
  });

  it('translates Cursor entries: ${env:X}, url + headers, secret query parameters', () => {
    const result = byName(CURSOR, 'mcp.json');
    expect(result.get('context7')?.config).toEqual({
      transport: 'auto',
      url: 'https://mcp.context7.com/mcp',
      headers: { CONTEXT7_API_KEY: '${CONTEXT7_API_KEY}' },
    });
    expect(ServerConfigSchema.parse(result.get('context7')?.config).transport).toBe('auto');
    expect(result.get('sentry')?.config).toEqual({
      transport: 'auto',
      url: 'https://mcp.sentry.dev/mcp?token=${SENTRY_TOKEN}',
    });
    expect(envOf(result.get('local')?.config)).toEqual({ API_TOKEN: '${API_TOKEN}' });
    expect(JSON.stringify(result.servers)).not.toMatch(/abc123secret|plain-secret/);
  });

  it('reads VS Code mcp.json with comments, trailing commas, inputs and types', () => {
    const result = byName(VSCODE, '.vscode/mcp.json');
    const github = result.get('github');
    expect(github?.config).toEqual({
      transport: 'streamable-http',
      url: 'https://api.githubcopilot.com/mcp/',
      headers: { Authorization: 'Bearer ${GITHUB_AUTHORIZATION}' },
    });
    expect(ServerConfigSchema.parse(github?.config).transport).toBe('streamable-http');
    expect(envOf(result.get('perplexity')?.config)).toEqual({
      PERPLEXITY_API_KEY: '${PERPLEXITY_KEY}',
    });
    expect(result.get('perplexity')?.notes).toContain(
      'envFile is not read; export its variables instead',
    );
    expect(ServerConfigSchema.parse(result.get('legacy')?.config).transport).toBe('sse');
    expect(argsOf(result.get('fs')?.config)).toEqual([
      '-y',
      '@modelcontextprotocol/server-filesystem',
      '.',
    ]);
    expect(JSON.stringify(result.servers)).not.toContain('ghp_copied_token');
  });

  it("reads @langchain/mcp-adapters' mcpServers, dropping what has no meaning here", () => {
    const result = byName(LANGCHAIN, 'langchain.json');
    expect(ServerConfigSchema.parse(result.get('math')?.config).transport).toBe('stdio');
    expect(result.get('math')?.notes[0]).toMatch(/^restart dropped/);
    expect(ServerConfigSchema.parse(result.get('weather')?.config).transport).toBe(
      'streamable-http',
    );
    expect(ServerConfigSchema.parse(result.get('news')?.config).transport).toBe('auto');
  });

  it('says what is missing for a file or an entry that is not a server config', () => {
    expect(() => importServers('{"theme": "dark"}', 'settings.json')).toThrow(
      /settings\.json has no MCP servers: missing "mcpServers"/,
    );
    expect(() => importServers('{nope', 'bad.json')).toThrow(AgentsError);
    const result = importServers('{"mcpServers": {"empty": {"args": ["x"]}}}', 'x.json');
    expect(result.servers).toEqual([]);
    expect(result.skipped[0]?.reason).toMatch(/missing "command" .* or "url"/);
  });

  it('knows where Claude Desktop, Cursor and VS Code keep their configs', () => {
    const env = { HOME: '/home/me' };
    expect(importSourcePaths('claude', '/p', env, 'linux')).toEqual([
      '/home/me/.config/Claude/claude_desktop_config.json',
    ]);
    expect(importSourcePaths('claude', '/p', env, 'darwin')[0]).toBe(
      '/home/me/Library/Application Support/Claude/claude_desktop_config.json',
    );
    expect(importSourcePaths('cursor', '/p', env, 'linux')).toEqual([
      '/p/.cursor/mcp.json',
      '/home/me/.cursor/mcp.json',
    ]);
    expect(importSourcePaths('vscode', '/p', env, 'linux')).toEqual(['/p/.vscode/mcp.json']);
  });
});
