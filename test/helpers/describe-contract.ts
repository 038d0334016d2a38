import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Contract } from '../../src/testing/index.js';

/**
 * Registers a framework-neutral contract (from `/testing`) with vitest: one `describe`, `setup`
 * before and `teardown` after its cases, one `it` per case.
 */
export function describeContract(
  name: string,
  contract: Contract,
  options: { setupTimeoutMs?: number } = {},
): void {
  describe(name, () => {
    beforeAll(() => contract.setup(), options.setupTimeoutMs);
    afterAll(() => contract.teardown());
    for (const testCase of contract.cases) it(testCase.name, () => testCase.run());
  });
}
