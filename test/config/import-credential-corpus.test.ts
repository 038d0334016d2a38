/**
 * Issue 35, item 8: `server import` never copies a credential. A corpus of the shapes seen in
 * real configs (the 17 the previous import copied among them), each imported for real: the
 * written record must not contain the secret, the secret must be what some `${VAR}` holds, and
 * a note must say so. Negatives must come through byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { importServers } from '../../src/config/import-servers.js';

const OPENAI = 'sk-proj-Abc123Def456Ghi789Jkl012';
const GITHUB = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const JWT =
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const PLAIN = 'hunter2-Secret';

type Entry = Record<string, unknown>;
const stdio = (args: string[], extra: Entry = {}): Entry => ({ command: 'srv', args, ...extra });

/** Shape name, entry, the secret that must not be written. */
const SHAPES: Array<[string, Entry, string]> = [
  [
    '--header "Authorization: Bearer X"',
    stdio(['--header', `Authorization: Bearer ${PLAIN}`]),
    PLAIN,
  ],
  ['-H "Authorization: Bearer X"', stdio(['-H', `Authorization: Bearer ${PLAIN}`]), PLAIN],
  ['--header=Authorization: Bearer X', stdio([`--header=Authorization: Bearer ${PLAIN}`]), PLAIN],
  [
    '-H "authorization:bearer X" (lower case, no space)',
    stdio(['-H', `authorization:bearer ${PLAIN}`]),
    PLAIN,
  ],
  [
    'Authorization: Basic X',
    stdio(['-H', 'Authorization: Basic dXNlcjpwYXNzd29yZA==']),
    'dXNlcjpwYXNzd29yZA==',
  ],
  ['Proxy-Authorization: X', stdio(['-H', `Proxy-Authorization: ${PLAIN}`]), PLAIN],
  ['Authorization: Token X', stdio(['--header', `Authorization: Token ${PLAIN}`]), PLAIN],
  ['"Bearer X" alone', stdio(['--auth-header', `Bearer ${PLAIN}`]), PLAIN],
  ['-H "Authorization: Bearer JWT"', stdio(['-H', `Authorization: Bearer ${JWT}`]), JWT],
  ['-H "X-Api-Key: X"', stdio(['-H', `X-Api-Key: ${PLAIN}`]), PLAIN],
  ['-H "X-Auth-Token: X"', stdio(['-H', `X-Auth-Token: ${PLAIN}`]), PLAIN],
  ['-H "Cookie: session=X"', stdio(['-H', `Cookie: session=${PLAIN}`]), PLAIN],
  ['-p X (a password)', stdio(['-u', 'root', '-p', PLAIN]), PLAIN],
  ['-P X', stdio(['-P', PLAIN]), PLAIN],
  ['--pw X', stdio(['--pw', PLAIN]), PLAIN],
  ['--pw=X', stdio([`--pw=${PLAIN}`]), PLAIN],
  ['--pass X', stdio(['--pass', PLAIN]), PLAIN],
  ['--password X', stdio(['--password', PLAIN]), PLAIN],
  ['--password=X', stdio([`--password=${PLAIN}`]), PLAIN],
  ['--token X', stdio(['--token', PLAIN]), PLAIN],
  ['--access-token X', stdio(['--access-token', PLAIN]), PLAIN],
  ['--api-key X', stdio(['--api-key', PLAIN]), PLAIN],
  ['--apikey=X', stdio([`--apikey=${PLAIN}`]), PLAIN],
  ['--key X', stdio(['--key', PLAIN]), PLAIN],
  ['--client-secret X', stdio(['--client-secret', PLAIN]), PLAIN],
  ['--secret=X', stdio([`--secret=${PLAIN}`]), PLAIN],
  ['-u user:password (curl)', stdio(['-u', `admin:${PLAIN}`]), PLAIN],
  ['--bearer X', stdio(['--bearer', PLAIN]), PLAIN],
  ['an OpenAI key as a bare argument', stdio([OPENAI]), OPENAI],
  ['a GitHub token as a bare argument', stdio([GITHUB]), GITHUB],
  ['a JWT as a bare argument', stdio([JWT]), JWT],
  ['a Slack token', stdio(['xoxb-1234567890-abcdefghij']), 'xoxb-1234567890-abcdefghij'],
  ['an AWS access key id', stdio(['AKIAIOSFODNN7EXAMPLE']), 'AKIAIOSFODNN7EXAMPLE'],
  [
    'a Google API key',
    stdio(['AIzaSyA1234567890abcdefghijklmnopqrstu']),
    'AIzaSyA1234567890abcdefghijklmnopqrstu',
  ],
  ['a GitLab token', stdio(['glpat-abcdefghij1234567890']), 'glpat-abcdefghij1234567890'],
  ['a Stripe key', stdio(['sk_live_abcdefghij1234567890']), 'sk_live_abcdefghij1234567890'],
  [
    'a Hugging Face token',
    stdio(['hf_abcdefghijklmnopqrstuvwxyz12345678']),
    'hf_abcdefghijklmnopqrstuvwxyz12345678',
  ],
  [
    'an Anthropic key',
    stdio(['sk-ant-api03-abcdefghij1234567890']),
    'sk-ant-api03-abcdefghij1234567890',
  ],
  ['API_KEY=X as one argument', stdio([`API_KEY=${PLAIN}`]), PLAIN],
  ['--env OPENAI_KEY=X', stdio(['--env', `OPENAI_KEY=${PLAIN}`]), PLAIN],
  [
    '-e GITHUB_TOKEN=X (docker)',
    { command: 'docker', args: ['run', '-e', `GITHUB_TOKEN=${PLAIN}`, 'img'] },
    PLAIN,
  ],
  ['env OPENAI_KEY: sk-…', stdio([], { env: { OPENAI_KEY: OPENAI } }), OPENAI],
  ['env KEY: X', stdio([], { env: { KEY: PLAIN } }), PLAIN],
  ['env MY_SERVICE_KEYS: X', stdio([], { env: { MY_SERVICE_KEYS: PLAIN } }), PLAIN],
  ['env ANTHROPIC_API_KEY', stdio([], { env: { ANTHROPIC_API_KEY: PLAIN } }), PLAIN],
  ['env DB_PASSWORD', stdio([], { env: { DB_PASSWORD: PLAIN } }), PLAIN],
  ['env a token under a harmless name', stdio([], { env: { OPTIONS: GITHUB } }), GITHUB],
  [
    'env extra args with --token X',
    stdio([], { env: { EXTRA_ARGS: `--verbose --token ${PLAIN}` } }),
    PLAIN,
  ],
  [
    'env JSON config with apiKey',
    stdio([], { env: { CONFIG: JSON.stringify({ apiKey: PLAIN, region: 'eu' }) } }),
    PLAIN,
  ],
  [
    'header Authorization: Bearer',
    { url: 'https://mcp.example.com/mcp', headers: { Authorization: `Bearer ${PLAIN}` } },
    PLAIN,
  ],
  [
    'header X-Api-Key',
    { url: 'https://mcp.example.com/mcp', headers: { 'X-Api-Key': PLAIN } },
    PLAIN,
  ],
  [
    'header with a token under a harmless name',
    { url: 'https://mcp.example.com/mcp', headers: { 'X-Custom': `Bearer ${PLAIN}` } },
    PLAIN,
  ],
  ['JSON argument {"apiKey": X}', stdio([JSON.stringify({ apiKey: PLAIN, model: 'gpt' })]), PLAIN],
  [
    'JSON argument nested {"auth": {"token": X}}',
    stdio([JSON.stringify({ auth: { token: PLAIN } })]),
    PLAIN,
  ],
  [
    'JSON argument {"headers": {"Authorization": "Bearer X"}}',
    stdio([JSON.stringify({ headers: { Authorization: `Bearer ${PLAIN}` } })]),
    PLAIN,
  ],
  [
    'JSON argument with a token under a harmless key',
    stdio([JSON.stringify({ value: OPENAI })]),
    OPENAI,
  ],
  ['JSON argument array of keys', stdio([JSON.stringify([{ key: PLAIN }])]), PLAIN],
  ['--config={"password": X}', stdio([`--config=${JSON.stringify({ password: PLAIN })}`]), PLAIN],
  [
    'sh -c "… --token X"',
    { command: 'sh', args: ['-c', `node server.js --token ${PLAIN}`] },
    PLAIN,
  ],
  [
    'bash -c "API_KEY=X node …"',
    { command: 'bash', args: ['-c', `API_KEY=${PLAIN} node server.js`] },
    PLAIN,
  ],
  [
    '/bin/sh -c "curl -H \'Authorization: Bearer X\'"',
    { command: '/bin/sh', args: ['-c', `curl -H 'Authorization: Bearer ${PLAIN}' https://x`] },
    PLAIN,
  ],
  [
    'sh -c with export OPENAI_KEY="X"',
    { command: 'sh', args: ['-c', `export OPENAI_KEY="${PLAIN}"; exec srv`] },
    PLAIN,
  ],
  ['sh -c with a bare token', { command: 'sh', args: ['-c', `srv ${GITHUB}`] }, GITHUB],
  ['zsh -c with --password=X', { command: 'zsh', args: ['-c', `srv --password=${PLAIN}`] }, PLAIN],
];

/** Must come through untouched: no variable, no note of a secret. */
const NEGATIVES: Array<[string, Entry]> = [
  [
    'npx package and flags',
    stdio(['-y', '@modelcontextprotocol/server-filesystem', '/home/u/project']),
  ],
  ['-p with a port', stdio(['-p', '8080'])],
  ['--port 5432', stdio(['--port', '5432'])],
  ['-u with a user name alone', stdio(['-u', 'root'])],
  ['a plain URL', stdio(['https://example.com/api?page=2'])],
  [
    'a reference in a header',
    { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${API_TOKEN}' } },
  ],
  [
    'a harmless header',
    { url: 'https://mcp.example.com/mcp', headers: { Accept: 'application/json' } },
  ],
  ['-H "Content-Type: application/json"', stdio(['-H', 'Content-Type: application/json'])],
  ['JSON argument without secrets', stdio([JSON.stringify({ debug: true, level: 3 })])],
  [
    'sh -c without secrets',
    { command: 'sh', args: ['-c', 'node server.js --port 3000 --verbose'] },
  ],
  [
    'env NODE_ENV and LOG_LEVEL',
    stdio([], { env: { NODE_ENV: 'production', LOG_LEVEL: 'debug' } }),
  ],
  ['env MONKEY_MODE (key inside a word)', stdio([], { env: { MONKEY_MODE: 'on' } })],
  ['env reference', stdio([], { env: { OPENAI_KEY: '${OPENAI_KEY}' } })],
  ['--model gpt-4o', stdio(['--model', 'gpt-4o', '--temperature=0.2'])],
  ['a word like "basic" in text', stdio(['--mode', 'basic'])],
  ['a short sk- word', stdio(['sk-learn'])],
  ['npx -p PACKAGE', { command: 'npx', args: ['-y', '-p', '@scope/mcp-tool', 'mcp-tool'] }],
];

function importOne(entry: Entry) {
  const result = importServers(JSON.stringify({ mcpServers: { svc: entry } }), 'mcp.json');
  expect(result.skipped).toEqual([]);
  return { server: result.servers[0]!, secrets: result.secrets };
}

describe('server import credential corpus', () => {
  it(`moves every one of ${SHAPES.length} credential shapes out of the record`, () => {
    const copied: string[] = [];
    for (const [shape, entry, secret] of SHAPES) {
      const { server, secrets } = importOne(entry);
      const written = JSON.stringify(server.config);
      // Precondition: the secret was in what was imported.
      expect(JSON.stringify(entry), shape).toContain(secret);
      if (written.includes(secret)) {
        copied.push(`${shape}: ${written}`);
        continue;
      }
      expect(
        Object.values(secrets).some((value) => value.includes(secret)),
        `${shape}: the value is kept for the export lines`,
      ).toBe(true);
      expect(server.notes.join('\n'), shape).toMatch(/not copied/);
      expect(written, shape).toMatch(/\$\{[A-Z0-9_]+\}/);
    }
    expect(copied).toEqual([]);
  });

  it(`leaves ${NEGATIVES.length} lookalikes untouched`, () => {
    for (const [shape, entry] of NEGATIVES) {
      const { server, secrets } = importOne(entry);
      expect(secrets, shape).toEqual({});
      for (const field of ['args', 'env', 'headers'] as const)
        if (entry[field] !== undefined)
          expect((server.config as Record<string, unknown>)[field], shape).toEqual(entry[field]);
      expect(server.notes.join('\n'), shape).not.toMatch(/not copied/);
    }
  });

  it('says when it is unsure: -p taken for a password is noted as such', () => {
    const { server } = importOne(stdio(['-p', PLAIN]));
    expect(server.notes.join('\n')).toMatch(/taken for a password; if it is not one, put it back/);
  });
});
