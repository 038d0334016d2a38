import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsError } from '../../src/errors.js';
import { createCheckpointer } from '../../src/checkpoint/backends.js';
import { assertRollbackDurability } from '../../src/checkpoint/durability.js';
import { redactConnectionUrl } from '../../src/checkpoint/postgres.js';
import type { Checkpointer } from '../../src/checkpoint/backend.js';
import { checkpointerContract } from '../../src/testing/index.js';
import { describeContract } from '../helpers/describe-contract.js';

/** The checkpointer contract from `/testing`, registered with vitest. */
function describeCheckpointerContract(name: string, create: () => Promise<Checkpointer>): void {
  describeContract(`checkpointer contract: ${name}`, checkpointerContract(create));
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agents-cp-contract-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let counter = 0;
describeCheckpointerContract('sqlite file', () =>
  createCheckpointer({ type: 'sqlite', path: join(dir, `nested/dir/cp-${counter++}.sqlite`) }),
);
describeCheckpointerContract('memory', () => createCheckpointer({ type: 'memory' }));

// Started by test/helpers/postgres-global-setup.ts (embedded) or AGENTS_TEST_POSTGRES_URL.
const postgresUrl = inject('postgresUrl');
if (postgresUrl === undefined || postgresUrl === '') {
  describe('checkpointer contract: postgres', () => {
    it('needs a PostgreSQL server', () => {
      // Fails rather than skips: the Postgres path must be exercised wherever tests run.
      throw new Error(
        'No PostgreSQL URL was provided: this file runs in the int-postgres vitest project, whose global setup starts an embedded server (or uses AGENTS_TEST_POSTGRES_URL).',
      );
    });
  });
} else {
  // A schema per run keeps parallel runs on one server apart.
  const schema = `agents_test_${process.pid}_${Date.now()}`;
  describeCheckpointerContract('postgres', () =>
    createCheckpointer({ type: 'postgres', url: postgresUrl }, { postgresSchema: schema }),
  );
}

describe('createCheckpointer', () => {
  it('reports an unreachable Postgres server as CONFIG_INVALID without leaking the password', async () => {
    const error = await createCheckpointer({
      type: 'postgres',
      url: 'postgres://user:s3cret@127.0.0.1:1/nope',
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(AgentsError.hasCode(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toContain('127.0.0.1:1');
    expect((error as Error).message).not.toContain('s3cret');
    expect(redactConnectionUrl('postgres://user:s3cret@h/db')).toBe('postgres://user:***@h/db');
  });

  it('refuses durability "exit" and accepts the others', () => {
    expect(() => assertRollbackDurability({ durability: 'exit' })).toThrow(/durability "exit"/);
    expect(() => assertRollbackDurability({ durability: 'sync' })).not.toThrow();
    expect(() => assertRollbackDurability(undefined)).not.toThrow();
  });
});
