import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isStructuredTool } from '@langchain/core/tools';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { JsonSchemaObject, ToolEntry, ToolResult } from '../core/tool-descriptor.js';
import { createLocalDescriptor, textResult } from './local-descriptor.js';

/** A parsed `custom:./path.js#exportName` reference. */
export interface CustomToolReference {
  /** The module path as written (relative to the project folder, or absolute). */
  module: string;
  /** The export holding the tool (or an array of tools); all tool exports when absent. */
  exportName?: string;
}

/** True when a skill's `tools` entry names a custom tool module. */
export function isCustomToolReference(entry: string): boolean {
  return entry.startsWith('custom:');
}

/** Parses `custom:./tools.js#myTool` (the `#export` part is optional). */
export function parseCustomToolReference(entry: string): CustomToolReference {
  const body = entry.slice('custom:'.length);
  const hash = body.lastIndexOf('#');
  const module = hash === -1 ? body : body.slice(0, hash);
  const exportName = hash === -1 ? undefined : body.slice(hash + 1);
  if (module === '' || exportName === '') {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Custom tool reference "${entry}" is malformed; write custom:./path/to/module.js#exportName.`,
      { details: { entry, problems: [] } },
    );
  }
  return { module, ...(exportName === undefined ? {} : { exportName }) };
}

/**
 * Imports a custom tool module and wraps each LangChain tool (`tool()`, `StructuredTool`,
 * `DynamicStructuredTool`) it exports as a {@link ToolEntry} with `source: 'custom'` and id
 * `custom:NAME`. Custom code declares no capabilities, so the conservative default applies:
 * write-class (`writes: true`), unless the tool's `metadata.readOnly === true`.
 *
 * Throws `CONFIG_INVALID` when the module cannot be imported or the export is not a tool.
 */
export async function loadCustomTools(entry: string, projectDir: string): Promise<ToolEntry[]> {
  const reference = parseCustomToolReference(entry);
  const path = isAbsolute(reference.module)
    ? reference.module
    : resolve(projectDir, reference.module);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Cannot import custom tool module ${path} (from "${entry}"): ${errorMessage(error)}. Check the path; it is relative to ${projectDir}.`,
      { cause: error, details: { entry, file: path, problems: [] } },
    );
  }
  const candidates: unknown[] =
    reference.exportName === undefined
      ? Object.values(module)
      : [module[reference.exportName]].flat();
  const tools = candidates
    .flat()
    .filter((value): value is StructuredToolInterface =>
      isStructuredTool(value as StructuredToolInterface),
    );
  if (tools.length === 0) {
    const what =
      reference.exportName === undefined
        ? 'no LangChain tools'
        : `no LangChain tool under export "${reference.exportName}"`;
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Custom tool module ${path} has ${what}; export tool(...) or a StructuredTool (exports: ${Object.keys(module).join(', ') || 'none'}).`,
      { details: { entry, file: path, problems: [] } },
    );
  }
  return tools.map(toCustomToolEntry);
}

/** Wraps one LangChain tool as a {@link ToolEntry} (`source: 'custom'`, id `custom:NAME`). */
export function toCustomToolEntry(tool: StructuredToolInterface): ToolEntry {
  const inputSchema = toInputSchema(tool.schema);
  const metadata: unknown = 'metadata' in tool ? tool.metadata : undefined;
  const readOnly =
    typeof metadata === 'object' &&
    metadata !== null &&
    'readOnly' in metadata &&
    metadata.readOnly === true;
  const descriptor = createLocalDescriptor({
    id: `custom:${tool.name}`,
    name: tool.name,
    source: 'custom',
    description: tool.description,
    inputSchema,
    capabilities: { readOnly },
    capabilitySource: readOnly ? 'override' : 'default',
    capabilityReason: readOnly
      ? 'custom tool metadata.readOnly = true'
      : 'custom tool: no declared capabilities, conservative default (writes)',
  });
  return {
    descriptor,
    async execute(args, context): Promise<ToolResult> {
      try {
        const output: unknown = await tool.invoke(args, {
          ...(context.signal ? { signal: context.signal } : {}),
        });
        return toToolResult(output);
      } catch (error) {
        // A failing custom tool is a tool failure the model sees, like an MCP isError.
        return textResult(`Tool "${tool.name}" failed: ${errorMessage(error)}`, true);
      }
    },
  };
}

function toInputSchema(schema: unknown): JsonSchemaObject {
  try {
    const json = toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]) as Record<
      string,
      unknown
    >;
    const { $schema: _ignored, ...rest } = json;
    return typeof rest['type'] === 'string' ? rest : { type: 'object', ...rest };
  } catch {
    return { type: 'object' };
  }
}

function toToolResult(output: unknown): ToolResult {
  if (typeof output === 'string') return textResult(output);
  // A ToolMessage (tools returning content_and_artifact) carries its content.
  if (typeof output === 'object' && output !== null && 'content' in output) {
    const content: unknown = output.content;
    if (typeof content === 'string') return textResult(content);
    if (Array.isArray(content)) {
      return textResult(
        content
          .map((block: unknown) =>
            typeof block === 'object' && block !== null && 'text' in block
              ? String(block.text)
              : JSON.stringify(block),
          )
          .join('\n'),
      );
    }
  }
  return {
    content: [{ type: 'text', text: JSON.stringify(output) ?? '' }],
    ...(isPlainObject(output) ? { structuredContent: output } : {}),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
