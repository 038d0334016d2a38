import { defineConfig } from 'vitest/config';

/**
 * Test files that need a PostgreSQL server. They run in the `e2e` project, whose global setup
 * starts one (or uses AGENTS_TEST_POSTGRES_URL) when that project has files to run.
 */
const POSTGRES_TESTS = [
  'test/cli/crash-harness-postgres.int.test.ts',
  'test/checkpoint/checkpointer.int.test.ts',
  'test/checkpoint/langgraph-spec.int.test.ts',
  'test/integration/several-workers.int.test.ts',
  'test/integration/shared-database-projects.int.test.ts',
];

/**
 * End-to-end files: each drives a whole tool of the outside world (npm pack + install of the
 * package, the LangGraph dev server, the docs' examples as child processes with `npx` servers
 * from the registry, a tsc build of the binary). Their own project, so `npm run test:fast`
 * (unit + int) leaves them out: no network, no build, no Postgres.
 */
const E2E_TESTS = [
  'test/package/**/*.int.test.ts',
  'test/studio/**/*.int.test.ts',
  'test/examples/examples.int.test.ts',
  'test/integration/known-servers.int.test.ts',
  'test/cli/built-binary.int.test.ts',
];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          // Sandboxes go to a temp state folder, never the real ~/.local/state/agents.
          globalSetup: ['test/global-setup.ts'],
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.int.test.ts', '**/node_modules/**'],
          testTimeout: 20_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'int',
          globalSetup: ['test/global-setup.ts'],
          include: ['test/**/*.int.test.ts'],
          exclude: [...POSTGRES_TESTS, ...E2E_TESTS, '**/node_modules/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Integration tests spawn real servers and git; two cores, so keep it modest.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e',
          // The Postgres files run here too: a pool of their own after this one cost CI a minute
          // it does not have (20 min). PostgreSQL starts only when this project has files to run.
          globalSetup: ['test/global-setup.ts', 'test/helpers/postgres-global-setup.ts'],
          include: [...E2E_TESTS, ...POSTGRES_TESTS],
          exclude: ['**/node_modules/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          // After `int`, not beside it: two pools of two workers would overload two cores.
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
