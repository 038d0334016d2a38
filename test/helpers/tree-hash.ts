import { createHash } from 'node:crypto';
import { treeDigest } from '../../src/testing/tree-digest.js';

export { treeDigest };

/** One hash of {@link treeDigest}: equal exactly when the two trees are. */
export async function treeHash(root: string): Promise<string> {
  return createHash('sha256')
    .update(JSON.stringify(await treeDigest(root)))
    .digest('hex');
}
