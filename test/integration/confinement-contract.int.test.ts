import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { bubblewrapBackend } from '../../src/confinement/bubblewrap.js';
import { landlockBackend } from '../../src/confinement/landlock.js';
import { confinementContract } from '../../src/testing/index.js';
import { describeContract } from '../helpers/describe-contract.js';

// Outside /tmp: bubblewrap's private /tmp must not be what hides the planted secret.
const root = join(process.cwd(), '.test-tmp');
mkdirSync(root, { recursive: true });

for (const backend of [bubblewrapBackend, landlockBackend]) {
  describeContract(
    `confinement contract: ${backend.type}`,
    confinementContract({ backend, root }),
    { setupTimeoutMs: 60_000 },
  );
}
