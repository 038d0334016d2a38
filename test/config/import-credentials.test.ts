import { describe, expect, it } from 'vitest';
import { importServers } from '../../src/config/import-servers.js';
import { formatCommandLine } from '../../src/redact.js';
import { exportLines } from '../../src/cli/commands/server-import.js';

/** Issue 23, hole 5: every credential shape of an imported config becomes a `${VAR}`. */
function importOne(entry: Record<string, unknown>) {
  const result = importServers(JSON.stringify({ mcpServers: { db: entry } }), 'mcp.json');
  expect(result.skipped).toEqual([]);
  return { ...result.servers[0]!, secrets: result.secrets };
}

describe('server import never copies a credential', () => {
  const shapes: Array<{
    shape: string;
    entry: Record<string, unknown>;
    secret: string;
    expected: Record<string, unknown>;
    variables: Record<string, string>;
  }> = [
    {
      shape: 'userinfo password in an argument URL (the official server-postgres config)',
      entry: {
        command: 'npx',
        args: [
          '-y',
          '@modelcontextprotocol/server-postgres',
          'postgresql://admin:s3cretPass@db.example.com:5432/prod',
        ],
      },
      secret: 's3cretPass',
      expected: {
        args: [
          '-y',
          '@modelcontextprotocol/server-postgres',
          'postgresql://admin:${DB_PASSWORD}@db.example.com:5432/prod',
        ],
      },
      variables: { DB_PASSWORD: 's3cretPass' },
    },
    {
      shape: 'a percent-encoded password (the variable holds it decoded)',
      entry: { command: 'srv', args: ['mysql://root:p%40ss@localhost/db'] },
      secret: 'p%40ss',
      expected: { args: ['mysql://root:${DB_PASSWORD}@localhost/db'] },
      variables: { DB_PASSWORD: 'p@ss' },
    },
    {
      shape: 'query keys password, token, key, secret, api_key in an argument URL',
      entry: {
        command: 'srv',
        args: [
          'https://api.example.com/v1?key=k3y&region=eu&token=t0k&api_key=ak&secret=s3&password=pw',
        ],
      },
      secret: 'k3y',
      expected: {
        args: [
          'https://api.example.com/v1?key=${DB_KEY}&region=eu&token=${DB_TOKEN}&api_key=${DB_API_KEY}&secret=${DB_SECRET}&password=${DB_PASSWORD}',
        ],
      },
      variables: {
        DB_KEY: 'k3y',
        DB_TOKEN: 't0k',
        DB_API_KEY: 'ak',
        DB_SECRET: 's3',
        DB_PASSWORD: 'pw',
      },
    },
    {
      shape: '--token=VALUE and --api-key VALUE flags',
      entry: { command: 'srv', args: ['--token=tok123', '--api-key', 'key456', '--verbose'] },
      secret: 'tok123',
      expected: { args: ['--token=${DB_TOKEN}', '--api-key', '${DB_API_KEY}', '--verbose'] },
      variables: { DB_TOKEN: 'tok123', DB_API_KEY: 'key456' },
    },
    {
      shape: 'a flag whose value is a URL with a password',
      entry: { command: 'srv', args: ['--dsn=postgres://u:dsnpw@h/db'] },
      secret: 'dsnpw',
      expected: { args: ['--dsn=postgres://u:${DB_DSN_PASSWORD}@h/db'] },
      variables: { DB_DSN_PASSWORD: 'dsnpw' },
    },
    {
      shape: 'env values: a secret-named key, and a URL with a password under any key',
      entry: {
        command: 'srv',
        env: {
          GITHUB_TOKEN: 'ghp_abc',
          DATABASE_URL: 'postgres://app:envpw@db/app',
          LOG_LEVEL: 'debug',
        },
      },
      secret: 'envpw',
      expected: {
        env: {
          GITHUB_TOKEN: '${GITHUB_TOKEN}',
          DATABASE_URL: 'postgres://app:${DATABASE_URL_PASSWORD}@db/app',
          LOG_LEVEL: 'debug',
        },
      },
      variables: { GITHUB_TOKEN: 'ghp_abc', DATABASE_URL_PASSWORD: 'envpw' },
    },
    {
      shape: 'a remote url with a password and a key',
      entry: { url: 'https://bot:urlpw@mcp.example.com/mcp?key=urlkey' },
      secret: 'urlpw',
      expected: { url: 'https://bot:${DB_PASSWORD}@mcp.example.com/mcp?key=${DB_KEY}' },
      variables: { DB_PASSWORD: 'urlpw', DB_KEY: 'urlkey' },
    },
  ];

  for (const { shape, entry, secret, expected, variables } of shapes) {
    it(shape, () => {
      const server = importOne(entry);
      expect(server.config).toMatchObject(expected);
      const written = JSON.stringify(server.config);
      for (const value of Object.values(variables)) expect(written).not.toContain(value);
      expect(written).not.toContain(secret);
      expect(server.secrets).toEqual(variables);
      expect(server.variables.sort()).toEqual(Object.keys(variables).sort());
      expect(server.notes.join('\n')).toMatch(/not copied/);
    });
  }

  it('leaves references, plain URLs and harmless flags alone', () => {
    const server = importOne({
      command: 'srv',
      args: [
        'postgresql://admin:${PGPASSWORD}@db/prod',
        'https://example.com/?page=2',
        '--port',
        '5432',
      ],
      env: { API_TOKEN: '${env:API_TOKEN}' },
    });
    expect(server.config).toMatchObject({
      args: [
        'postgresql://admin:${PGPASSWORD}@db/prod',
        'https://example.com/?page=2',
        '--port',
        '5432',
      ],
      env: { API_TOKEN: '${API_TOKEN}' },
    });
    expect(server.secrets).toEqual({});
  });

  it('export lines carry the values only when asked (a terminal), shell-quoted', () => {
    const secrets = { DB_PASSWORD: "it's s3cret", DB_KEY: 'plain' };
    expect(exportLines(['DB_KEY', 'DB_PASSWORD'], secrets, true)).toEqual([
      '  export DB_KEY=plain',
      `  export DB_PASSWORD='it'\\''s s3cret'`,
    ]);
    expect(exportLines(['DB_KEY', 'DB_PASSWORD'], secrets, false)).toEqual([
      '  export DB_KEY=...',
      '  export DB_PASSWORD=...',
    ]);
  });

  it('server list masks credentials written by hand: URL passwords and secret query values', () => {
    expect(
      formatCommandLine('npx', [
        '@modelcontextprotocol/server-postgres',
        'postgresql://admin:s3cretPass@db.example.com:5432/prod',
        'https://x.example.com/?key=k3y&page=2',
        '--dsn=postgres://u:dsnpw@h/db',
      ]),
    ).toBe(
      'npx @modelcontextprotocol/server-postgres postgresql://admin:***@db.example.com:5432/prod "https://x.example.com/?key=***&page=2" --dsn=postgres://u:***@h/db',
    );
  });
});
