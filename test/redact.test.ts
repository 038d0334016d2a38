import { describe, expect, it } from 'vitest';
import { redactConnectionUrl } from '../src/checkpoint/postgres.js';
import { formatCommandLine, formatUrl, redactUrl } from '../src/redact.js';

describe('redaction for messages and logs', () => {
  it('masks the password of a connection URL and secret query values, keeping the rest', () => {
    expect(redactConnectionUrl('postgres://user:s3cret@h/db')).toBe('postgres://user:***@h/db');
    // pg reads connection parameters from the query string too, password included.
    const redacted = redactConnectionUrl(
      'postgres://user@h:5432/db?password=s3cret&sslmode=require',
    );
    expect(redacted).not.toContain('s3cret');
    expect(redacted).toBe('postgres://user@h:5432/db?password=***&sslmode=require');
    expect(redactConnectionUrl('not a url')).toBe('<invalid url>');
  });

  it('drops userinfo and masks every query value of a server URL', () => {
    expect(formatUrl('https://me:pw@example.com/mcp?key=abc&x=1#frag')).toBe(
      'https://example.com/mcp?key=***&x=***',
    );
    expect(redactUrl('https://me:pw@example.com/', { keepUsername: true })).toBe(
      'https://me:***@example.com/',
    );
  });

  it('redacts values of secret-looking flags in a command line', () => {
    expect(formatCommandLine('server-bin', ['--api-key', 'sk-1', 'TOKEN=abc', 'plain arg'])).toBe(
      'server-bin --api-key *** TOKEN=*** "plain arg"',
    );
  });
});
