import { afterAll, beforeAll, describe, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { bubblewrapBackend } from '../../src/confinement/bubblewrap.js';
import { landlockBackend } from '../../src/confinement/landlock.js';
import { confinementContract } from '../../src/testing/index.js';

// Outside /tmp: bubblewrap's private /tmp must not be what hides the planted secret.
const root = join(process.cwd(), '.test-tmp');
mkdirSync(root, { recursive: true });

for (const backend of [bubblewrapBackend, landlockBackend]) {
  describe(`confinement contract: ${backend.type}`, () => {
    const contract = confinementContract({ backend, root });
    beforeAll(() => contract.setup(), 60_000);
    afterAll(() => contract.teardown());
    for (const testCase of contract.cases) it(testCase.name, () => testCase.run());
  });
}
