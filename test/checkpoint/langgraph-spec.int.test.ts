/**
 * LangGraph's own saver validation spec (`@langchain/langgraph-checkpoint-validation`, what
 * langgraphjs runs on its savers) on the two savers we subclass: the SQLite one (which adds a
 * `task_path` column to the upstream `writes` table and writes with its own statements) and the
 * Postgres one (fork-safe versions, `task_path`). Our contract (`checkpointerContract`) covers
 * what rollback needs; this covers what LangGraph expects of any `BaseCheckpointSaver`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createCheckpointer } from '../../src/checkpoint/backends.js';
import type { Checkpointer } from '../../src/checkpoint/backend.js';

// The spec calls vitest's globals, which this repo leaves off: hand them over before it loads.
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
// A dev dependency; its initializer type is spelled out below.
const SPEC = '@langchain/langgraph-checkpoint-validation';
interface SpecInitializer {
  checkpointerName: string;
  createCheckpointer(): Promise<BaseCheckpointSaver>;
  destroyCheckpointer(saver: BaseCheckpointSaver): Promise<void>;
}
const { validate } = (await import(SPEC)) as { validate: (initializer: SpecInitializer) => void };

/** The spec's initializer for one of our stores: a fresh store per suite, closed after it. */
function initializer(name: string, open: () => Promise<Checkpointer>): SpecInitializer {
  const opened = new Map<BaseCheckpointSaver, Checkpointer>();
  return {
    checkpointerName: name,
    async createCheckpointer() {
      const checkpointer = await open();
      opened.set(checkpointer.saver, checkpointer);
      return checkpointer.saver;
    },
    async destroyCheckpointer(saver: BaseCheckpointSaver) {
      await opened.get(saver)?.close();
      opened.delete(saver);
    },
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agents-cp-spec-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let counter = 0;
// Named as the upstream saver it extends, so the spec applies its one exception for that saver
// (it stores every channel value, not only the changed ones: "SQLiteSaver doesn't store channel
// deltas"); every other case runs on our subclass, `task_path` column and own statements included.
validate(
  initializer('@langchain/langgraph-checkpoint-sqlite', () =>
    createCheckpointer({ type: 'sqlite', path: join(dir, `spec-${counter++}.sqlite`) }),
  ),
);

// Started by test/helpers/postgres-global-setup.ts (embedded) or AGENTS_TEST_POSTGRES_URL.
const postgresUrl = inject('postgresUrl');
if (postgresUrl === undefined || postgresUrl === '') {
  describe('LangGraph saver spec: postgres', () => {
    it('needs a PostgreSQL server', () => {
      // Fails rather than skips: the Postgres saver must be validated wherever tests run.
      throw new Error(
        'No PostgreSQL URL was provided: this file runs in the e2e vitest project, whose global setup starts an embedded server (or uses AGENTS_TEST_POSTGRES_URL).',
      );
    });
  });
} else {
  validate(
    initializer('agents postgres saver', () =>
      // A schema per suite: the spec expects an empty store each time.
      createCheckpointer(
        { type: 'postgres', url: postgresUrl },
        { postgresSchema: `agents_spec_${process.pid}_${Date.now()}_${counter++}` },
      ),
    ),
  );
}
