import type { ContentBlock } from '@langchain/core/messages';
import type { CallToolResult, EmbeddedResource, ResourceLink } from '@modelcontextprotocol/client';

/**
 * What a tool result keeps beside the model-visible content, on `ToolMessage.artifact`.
 * Only the keys that apply are present.
 */
export interface McpToolArtifact {
  /** The result's `structuredContent`, once (it is not copied into the text). */
  structuredContent?: Record<string, unknown>;
  /** The result's `_meta`, incl. records this library adds (e.g. `agents/change`). */
  _meta?: Record<string, unknown>;
  /** Embedded resources and resource links, verbatim. */
  resources?: Array<EmbeddedResource | ResourceLink>;
  /** True when the server flagged the result as a tool error. */
  isError?: true;
}

/** Model-visible content: a string when the result is all text, else LangChain standard blocks. */
export type ToolMessageContent = string | ContentBlock.Standard[];

/** A `CallToolResult` split into what the model sees and what stays on the artifact. */
export interface ToolMessageParts {
  content: ToolMessageContent;
  artifact: McpToolArtifact;
}

function describeBlob(blob: string): string {
  // base64 length → decoded bytes, without decoding.
  const padding = blob.endsWith('==') ? 2 : blob.endsWith('=') ? 1 : 0;
  return `${Math.max(0, Math.floor((blob.length * 3) / 4) - padding)} bytes`;
}

/**
 * Converts an MCP `CallToolResult` into `ToolMessage` content and artifact.
 *
 * - text → text (all-text results become one string, parts joined by a newline);
 * - image / audio → LangChain standard `image` / `audio` blocks (base64 + mimeType);
 * - embedded text resources → their text, headed by the URI; binary resources → an `image`
 *   block for images, else a one-line note (the bytes stay on the artifact);
 * - resource_link → a one-line reference (name, URI, type), the link itself on the artifact;
 * - `structuredContent` → artifact only; when there is no other content its JSON becomes the text;
 * - `_meta` → artifact.
 */
export function toToolMessageParts(result: CallToolResult): ToolMessageParts {
  const artifact: McpToolArtifact = {};
  if (result.structuredContent !== undefined)
    artifact.structuredContent = result.structuredContent as Record<string, unknown>;
  if (result._meta !== undefined) artifact._meta = result._meta;
  if (result.isError === true) artifact.isError = true;
  return { content: contentOf(result, artifact), artifact };
}

/**
 * The model-visible content of a result alone, exactly as {@link toToolMessageParts} gives it,
 * without building the artifact (a plain `invoke` returns the content only).
 */
export function toToolMessageContent(result: CallToolResult): ToolMessageContent {
  return contentOf(result, undefined);
}

/** Converts the content; resources are recorded on `artifact` when one is given. */
function contentOf(
  result: CallToolResult,
  artifact: McpToolArtifact | undefined,
): ToolMessageContent {
  const items = Array.isArray(result.content) ? result.content : [];
  // The common result, one text part: no block list to build and throw away.
  if (items.length === 1 && items[0]!.type === 'text') return items[0]!.text;
  const blocks: ContentBlock.Standard[] = [];
  let allText = true;
  const texts: string[] = [];
  const addText = (text: string): void => {
    texts.push(text);
    blocks.push({ type: 'text', text });
  };

  for (const item of items) {
    switch (item.type) {
      case 'text':
        addText(item.text);
        break;
      case 'image':
        allText = false;
        blocks.push({ type: 'image', mimeType: item.mimeType, data: item.data });
        break;
      case 'audio':
        allText = false;
        blocks.push({ type: 'audio', mimeType: item.mimeType, data: item.data });
        break;
      case 'resource': {
        if (artifact !== undefined) (artifact.resources ??= []).push(item);
        const resource = item.resource;
        if ('text' in resource && typeof resource.text === 'string') {
          addText(`[resource ${resource.uri}]\n${resource.text}`);
        } else if ('blob' in resource && typeof resource.blob === 'string') {
          const mimeType = resource.mimeType ?? 'application/octet-stream';
          if (mimeType.startsWith('image/')) {
            allText = false;
            blocks.push({ type: 'image', mimeType, data: resource.blob });
          } else {
            addText(
              `[resource ${resource.uri} (${mimeType}, ${describeBlob(resource.blob)}) kept in the tool artifact]`,
            );
          }
        }
        break;
      }
      case 'resource_link': {
        if (artifact !== undefined) (artifact.resources ??= []).push(item);
        const details = [item.mimeType, item.description].filter(
          (part) => part !== undefined && part !== '',
        );
        addText(
          `[resource link] ${item.name}: ${item.uri}${details.length > 0 ? ` (${details.join('; ')})` : ''}`,
        );
        break;
      }
      default:
        // Unknown content types from newer servers: say so rather than drop silently.
        addText(`[unsupported content type "${String((item as { type?: unknown }).type)}"]`);
    }
  }

  if (blocks.length === 0) {
    return result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : '';
  }
  return allText ? texts.join('\n') : blocks;
}

/** A byte count for people: `512 B`, `12 KB`, `3.4 MB`. */
export function formatByteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * ToolMessage content as one line of text for a person: text as is, images and audio as
 * placeholders such as `[image/png 12 KB]` (a terminal cannot show them, but must not hide
 * that they came).
 */
export function describeToolContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content as unknown[]) {
    if (typeof block !== 'object' || block === null) continue;
    const item = block as { type?: unknown; text?: unknown; mimeType?: unknown; data?: unknown };
    if (item.type === 'text' && typeof item.text === 'string') parts.push(item.text);
    else {
      const kind = typeof item.type === 'string' ? item.type : 'content';
      const mime = typeof item.mimeType === 'string' ? item.mimeType : kind;
      const size =
        typeof item.data === 'string' ? ` ${formatByteSize(base64Bytes(item.data))}` : '';
      parts.push(`[${mime}${size}]`);
    }
  }
  return parts.join('\n');
}

/** The model-visible text of a result (text parts only), e.g. for error messages. */
export function resultText(result: CallToolResult): string {
  const parts: string[] = [];
  for (const item of Array.isArray(result.content) ? result.content : []) {
    if (item.type === 'text') parts.push(item.text);
  }
  return parts.join('\n');
}
