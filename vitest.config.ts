import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          // Sandboxes go to a temp state folder, never the real ~/.local/state/agents.
          globalSetup: ['test/global-setup.ts'],
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.int.test.ts', 'node_modules/**'],
          testTimeout: 20_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'int',
          globalSetup: ['test/global-setup.ts'],
          include: ['test/**/*.int.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Integration tests spawn real servers and git; two cores, so keep it modest.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
