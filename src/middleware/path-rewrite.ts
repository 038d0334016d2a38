import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { SandboxPathMap } from '../sandbox/path-map.js';
import type { ToolResult } from '../registry/tool-descriptor.js';
import type { ToolMiddleware } from './types.js';

/** The result `_meta` key under which a refused path is described (for UIs and audit). */
export const PATH_REFUSED_META_KEY = 'agents/path-refused';

/**
 * Path rewriting as tool-call middleware.
 *
 * In: the values at `descriptor.pathArguments` are mapped from logical paths (or the user's real
 * repo path, or `file://` URIs) into the sandbox; a descriptor with no path arguments skips the
 * walk, and every other argument reaches the server byte-identical. A path that would escape
 * becomes an `isError: true` result whose text tells the model what to do; no call is sent.
 * Out: sandbox paths in the result (text, resource URIs, structuredContent) are mapped back to
 * logical paths. It applies to read-only tools too (defense in depth: reads can leak).
 *
 * Pass a getter when the sandbox can change over the middleware's life (e.g. per thread).
 */
export function createPathRewriteMiddleware(
  paths: SandboxPathMap | (() => SandboxPathMap),
): ToolMiddleware {
  const current = typeof paths === 'function' ? paths : () => paths;
  return {
    name: 'path-rewrite',
    async wrap(request, next) {
      const map = current();
      // Symlink checks are cached between write-class calls: the tree only changes under a
      // write-class call, and the cache is dropped when one starts and again when it ends.
      map.trackWrites();
      const { pathArguments, capabilities } = request.descriptor;
      let args = request.args;
      if (pathArguments.length > 0) {
        try {
          args = map.rewriteArgs(request.args, pathArguments);
        } catch (error) {
          if (AgentsError.hasCode(error, AgentsErrorCode.PathOutsideSandbox)) return refusal(error);
          throw error;
        }
      }
      const mayWrite = !(capabilities.readOnly.value && !capabilities.writes.value);
      const endWrite = mayWrite ? map.beginWrite() : undefined;
      let result: ToolResult;
      try {
        result = await next(args === request.args ? request : { ...request, args });
      } finally {
        endWrite?.();
      }
      return map.rewriteResult(result);
    },
  };
}

function refusal(error: AgentsError): ToolResult {
  return {
    content: [{ type: 'text', text: error.message }],
    isError: true,
    _meta: { [PATH_REFUSED_META_KEY]: { code: error.code, ...error.details } },
  };
}
