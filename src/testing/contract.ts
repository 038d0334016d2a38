/** One check of a contract: a name and a function that throws when the backend fails it. */
export interface ContractCase {
  name: string;
  run(): Promise<void>;
}

/**
 * A contract suite, framework-neutral: run `setup` once, each case (in any runner, one test per
 * case), then `teardown`. See `test/helpers/describe-contract.ts` for a vitest adapter.
 */
export interface Contract {
  setup(): Promise<void>;
  cases: ContractCase[];
  teardown(): Promise<void>;
}

/**
 * A contract whose cases each get a fresh fixture: `open` before the check, `close` after it
 * (also when the check failed), so cases never share state and can run in any order.
 */
export function perCaseContract<Fixture>(
  open: () => Promise<Fixture>,
  close: (fixture: Fixture) => Promise<void>,
  checks: Record<string, (fixture: Fixture) => Promise<void>>,
): Contract {
  const cases = Object.entries(checks).map(([name, check]) => ({
    name,
    run: async () => {
      const fixture = await open();
      try {
        await check(fixture);
      } finally {
        await close(fixture);
      }
    },
  }));
  return { setup: async () => undefined, cases, teardown: async () => undefined };
}
