import { pathToFileURL } from 'node:url';
import type { Root } from '@modelcontextprotocol/client';

/**
 * The MCP `roots/list` answer for a sandbox: exactly the sandbox root as a `file://` URI, never
 * the user's real repo or home. Servers that honour roots then agree with the path rewrite.
 * Server lifecycle code answers `roots/list` with it and sends `notifications/roots/list_changed`
 * when the run's sandbox changes.
 */
export function sandboxRoots(sandbox: { readonly root: string; readonly id?: string }): Root[] {
  return [
    {
      uri: pathToFileURL(sandbox.root).href,
      name: sandbox.id === undefined ? 'sandbox' : `sandbox ${sandbox.id}`,
    },
  ];
}
