import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { SandboxPathMap } from '../sandbox/path-map.js';
import { toolErrorResult, type ToolResult } from '../core/tool-descriptor.js';
import type { ToolCallHandler, ToolCallRequest, ToolMiddleware } from '../core/tool-middleware.js';

/** The result `_meta` key under which a refused path is described (for UIs and audit). */
export const PATH_REFUSED_META_KEY = 'agents/path-refused';

/**
 * Path rewriting as tool-call middleware.
 *
 * In: the values at `descriptor.pathArguments` are mapped from logical paths (or the user's real
 * repo path, or `file://` URIs) into the sandbox; a descriptor with no path arguments skips the
 * walk, and every other argument reaches the server byte-identical. A path that would escape
 * becomes an `isError: true` result whose text tells the model what to do; no call is sent.
 * Out: sandbox paths in the result (text, resource URIs, structuredContent) and in a thrown
 * error's message (a JSON-RPC error, a crash report) are mapped back to logical paths. It applies to read-only tools too (defense in depth: reads can leak).
 *
 * Pass a getter when the sandbox can change over the middleware's life (e.g. per thread).
 */
export function createPathRewriteMiddleware(
  paths: SandboxPathMap | (() => SandboxPathMap),
): ToolMiddleware {
  const current = typeof paths === 'function' ? paths : () => paths;
  return {
    name: 'path-rewrite',
    // Not an async function: a read-only call (most calls) then costs one promise step, not two.
    wrap(request, next) {
      try {
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
            if (AgentsError.hasCode(error, AgentsErrorCode.PathOutsideSandbox)) {
              return Promise.resolve(refusal(error));
            }
            throw error;
          }
        }
        const forward = args === request.args ? request : { ...request, args };
        const mayWrite = !(capabilities.readOnly.value && !capabilities.writes.value);
        if (!mayWrite) {
          return next(forward).then(
            (result) => map.rewriteResult(result),
            (error: unknown) => Promise.reject(map.rewriteError(error) as Error),
          );
        }
        return runWrite(map, next, forward);
      } catch (error) {
        // As from an async function: a failure before the call rejects, it never throws.
        return Promise.reject(error as Error);
      }
    },
  };
}

/** A write-class call: announced to the path map for its whole duration (see trackWrites). */
async function runWrite(
  map: SandboxPathMap,
  next: ToolCallHandler,
  request: ToolCallRequest,
): Promise<ToolResult> {
  const endWrite = map.beginWrite();
  let result: ToolResult;
  try {
    result = await next(request);
  } catch (error) {
    // JSON-RPC errors and transport failures quote paths too: the model sees logical ones.
    throw map.rewriteError(error);
  } finally {
    endWrite();
  }
  return map.rewriteResult(result);
}

function refusal(error: AgentsError): ToolResult {
  return toolErrorResult(error.message, {
    [PATH_REFUSED_META_KEY]: { code: error.code, ...error.details },
  });
}
