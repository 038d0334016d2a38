import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';
import { ResultMetaKey } from '../core/tool-descriptor.js';
import type { ToolDescriptor, ToolResult } from '../core/tool-descriptor.js';
import { matchesTool } from './decide.js';

/** What is being spilled, so the spill can name the file. */
export interface SpillInfo {
  toolId: string;
  toolCallId?: string;
  /** `text` (all text content joined), `image` (decoded bytes), `structured` (JSON). */
  kind: 'text' | 'image' | 'structured';
  /** File extension without the dot (`txt`, `json`, `png`). */
  extension: string;
}

/**
 * Writes a full result somewhere the model can read it later and returns its logical path (e.g.
 * relative to the sandbox root, so the model's file tools reach it through path rewriting).
 */
export type Spill = (content: string | Uint8Array, info: SpillInfo) => Promise<string>;

/** Caps on what the model sees of one result. */
export interface OutputBudgetLimits {
  /** Bytes of text (UTF-8) the model sees. Default 32 KiB. */
  maxBytes?: number;
  /** Estimated tokens (bytes / 4) the model sees; the smaller of the two caps applies. */
  maxTokens?: number;
  /** Bytes (decoded) of one image; bigger images are replaced by a marker. Default 1 MiB. */
  maxImageBytes?: number;
  /** Content items kept; the rest are dropped with a marker. Default 100. */
  maxItems?: number;
}

/** Options of {@link createOutputBudgetMiddleware}. */
export interface OutputBudgetOptions extends OutputBudgetLimits {
  /** Where full results go; without it the cut text is only described, not kept. */
  spill?: Spill;
  /** Per-tool limits keyed by tool id or name (globs allowed); they replace the defaults field by field. */
  perTool?: Record<string, OutputBudgetLimits>;
}

/** What the budget did to one result; stored under `result._meta['agents/budget']`. */
export interface BudgetRecord {
  originalBytes: number;
  keptBytes: number;
  cutBytes: number;
  estimatedTokens: number;
  /** Logical paths of the spilled full content. */
  spilledTo: string[];
  droppedItems: number;
}

const DEFAULT_MAX_BYTES = 32 * 1024;
const DEFAULT_MAX_IMAGE_BYTES = 1024 * 1024;
const DEFAULT_MAX_ITEMS = 100;
/** Rough bytes per token for the estimate; good enough for a cap. */
const BYTES_PER_TOKEN = 4;

interface ResolvedLimits {
  maxBytes: number;
  maxImageBytes: number;
  maxItems: number;
}

function resolveLimits(
  base: OutputBudgetLimits,
  override: OutputBudgetLimits | undefined,
): ResolvedLimits {
  const merged = { ...base, ...override };
  const byteCap = merged.maxBytes ?? DEFAULT_MAX_BYTES;
  const tokenCap = merged.maxTokens === undefined ? Infinity : merged.maxTokens * BYTES_PER_TOKEN;
  return {
    maxBytes: Math.max(256, Math.min(byteCap, tokenCap)),
    maxImageBytes: merged.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES,
    maxItems: merged.maxItems ?? DEFAULT_MAX_ITEMS,
  };
}

type ContentItem = ToolResult['content'][number];

/** Cuts a string to at most `maxBytes` UTF-8 bytes from the start (or end), on a character boundary. */
function sliceBytes(text: string, maxBytes: number, fromEnd: boolean): string {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= maxBytes) return text;
  let piece = fromEnd ? buffer.subarray(buffer.length - maxBytes) : buffer.subarray(0, maxBytes);
  // Step off continuation bytes so no character is split.
  if (fromEnd) {
    let start = 0;
    while (start < piece.length && (piece[start]! & 0xc0) === 0x80) start++;
    piece = piece.subarray(start);
  } else {
    let end = piece.length;
    let back = end - 1;
    while (back >= 0 && (piece[back]! & 0xc0) === 0x80) back--;
    if (back >= 0) {
      const lead = piece[back]!;
      const width = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (back + width > end) end = back;
    }
    piece = piece.subarray(0, end);
  }
  return piece.toString('utf8');
}

function formatBytes(bytes: number): string {
  return bytes.toLocaleString('en-US');
}

function imageExtension(mimeType: string): string {
  const sub = mimeType.split('/')[1] ?? 'bin';
  return sub.replace(/[^a-z0-9]/gi, '').slice(0, 8) || 'bin';
}

/**
 * Caps what the model sees of a tool result. Over the cap, the text keeps its head and tail with
 * a marker saying how much was cut and where the full text went (`spill`, usually a file in the
 * sandbox); images bigger than their own cap become a marker (and are spilled); content items past
 * `maxItems` are dropped with a marker; oversized `structuredContent` is spilled and removed.
 * `_meta` (change records, policy records) is kept. Under the cap the result passes unchanged
 * after a length check.
 */
export function createOutputBudgetMiddleware(options: OutputBudgetOptions = {}): ToolMiddleware {
  const defaults = resolveLimits(options, undefined);
  const perTool = Object.entries(options.perTool ?? {});
  const limitsCache = new Map<string, ResolvedLimits>();
  const limitsFor = (descriptor: ToolDescriptor): ResolvedLimits => {
    if (perTool.length === 0) return defaults;
    let limits = limitsCache.get(descriptor.id);
    if (limits === undefined) {
      const override = perTool.find(([pattern]) => matchesTool(pattern, descriptor))?.[1];
      limits = resolveLimits(options, override);
      limitsCache.set(descriptor.id, limits);
    }
    return limits;
  };

  return {
    name: 'output-budget',
    async wrap(request, next) {
      const result = await next(request);
      const limits = limitsFor(request.descriptor);
      if (isUnderBudget(result, limits)) return result;
      return applyBudget(result, limits, options.spill, {
        toolId: request.descriptor.id,
        ...(request.context.toolCallId === undefined
          ? {}
          : { toolCallId: request.context.toolCallId }),
      });
    },
  };
}

/** The text of a text item or text resource; undefined for binary items and links. */
function itemText(item: ContentItem): string | undefined {
  if (item.type === 'text') return item.text;
  if (item.type === 'resource' && 'text' in item.resource) return item.resource.text;
  return undefined;
}

/** Decoded size of a binary item (base64: 4 characters per 3 bytes); 0 for other items. */
function binaryBytes(item: ContentItem): number {
  if (item.type === 'image' || item.type === 'audio') return (item.data.length * 3) / 4;
  if (item.type === 'resource' && 'blob' in item.resource)
    return (item.resource.blob.length * 3) / 4;
  return 0;
}

/**
 * True when the result fits its budget and must pass unchanged. Fast path: UTF-8 is at most 3
 * bytes per UTF-16 unit, so `length * 3` bounds the size; only when that bound is over the cap
 * are the texts measured exactly, so a result that merely looks big is never rewritten.
 */
function isUnderBudget(result: ToolResult, limits: ResolvedLimits): boolean {
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length > limits.maxItems) return false;
  let bound = 0;
  for (const item of content) {
    const text = itemText(item);
    if (text !== undefined) bound += text.length * 3;
    else if (binaryBytes(item) > limits.maxImageBytes) return false;
  }
  // Serializing is the only honest size; only done when structured content is present.
  let exact =
    result.structuredContent === undefined
      ? 0
      : Buffer.byteLength(JSON.stringify(result.structuredContent), 'utf8');
  if (bound + exact <= limits.maxBytes) return true;
  for (const item of content) {
    const text = itemText(item);
    if (text === undefined) continue;
    exact += Buffer.byteLength(text, 'utf8');
    if (exact > limits.maxBytes) return false;
  }
  return true;
}

async function applyBudget(
  result: ToolResult,
  limits: ResolvedLimits,
  spill: Spill | undefined,
  where: { toolId: string; toolCallId?: string },
): Promise<ToolResult> {
  const record: BudgetRecord = {
    originalBytes: 0,
    keptBytes: 0,
    cutBytes: 0,
    estimatedTokens: 0,
    spilledTo: [],
    droppedItems: 0,
  };
  const trySpill = async (
    content: string | Uint8Array,
    kind: SpillInfo['kind'],
    extension: string,
  ): Promise<string> => {
    if (spill === undefined) return 'not kept (no spill configured)';
    try {
      const path = await spill(content, { ...where, kind, extension });
      record.spilledTo.push(path);
      return path;
    } catch (error) {
      return `could not be saved (${errorMessage(error)})`;
    }
  };

  const content = Array.isArray(result.content) ? result.content : [];
  const kept: ContentItem[] = [];
  const texts: string[] = [];
  let textSlot = -1;
  let dropped = 0;
  for (const item of content) {
    if (item.type === 'text' || (item.type === 'resource' && 'text' in item.resource)) {
      const text =
        item.type === 'text' ? item.text : 'text' in item.resource ? item.resource.text : '';
      texts.push(text);
      if (item.type === 'text') {
        if (textSlot === -1) {
          textSlot = kept.length;
          kept.push(item);
        }
        continue;
      }
      // A text resource is folded into the text budget but kept as a resource when it fits below.
    }
    if (kept.length >= limits.maxItems) {
      dropped++;
      continue;
    }
    if (item.type === 'image' || item.type === 'audio') {
      const bytes = Buffer.from(item.data, 'base64');
      if (bytes.length > limits.maxImageBytes) {
        const path = await trySpill(bytes, 'image', imageExtension(item.mimeType));
        record.originalBytes += bytes.length;
        record.cutBytes += bytes.length;
        kept.push({
          type: 'text',
          text:
            `[${item.type} (${item.mimeType}, ${formatBytes(bytes.length)} bytes) removed by the output budget ` +
            `(cap ${formatBytes(limits.maxImageBytes)} bytes). Full ${item.type}: ${path}]`,
        });
        continue;
      }
    }
    if (item.type === 'resource' && 'text' in item.resource) continue;
    kept.push(item);
  }
  record.droppedItems = dropped;

  const fullText = texts.join('\n');
  const textBytes = Buffer.byteLength(fullText, 'utf8');
  record.originalBytes += textBytes;
  let structuredContent = result.structuredContent;
  let structuredNote = '';
  let budget = limits.maxBytes;
  if (structuredContent !== undefined) {
    const json = JSON.stringify(structuredContent);
    const jsonBytes = Buffer.byteLength(json, 'utf8');
    record.originalBytes += jsonBytes;
    if (jsonBytes + textBytes > limits.maxBytes) {
      const path = await trySpill(json, 'structured', 'json');
      structuredContent = undefined;
      record.cutBytes += jsonBytes;
      structuredNote = `[structuredContent (${formatBytes(jsonBytes)} bytes) removed by the output budget. Full JSON: ${path}]`;
      budget -= Buffer.byteLength(structuredNote, 'utf8');
    } else {
      budget -= jsonBytes;
      record.keptBytes += jsonBytes;
    }
  }

  let text = fullText;
  if (textBytes > budget) {
    const path = await trySpill(fullText, 'text', 'txt');
    const half = Math.max(64, Math.floor(budget / 2) - 200);
    const head = sliceBytes(fullText, half, false);
    const tail = sliceBytes(fullText, half, true);
    const shown = Buffer.byteLength(head, 'utf8') + Buffer.byteLength(tail, 'utf8');
    const cut = textBytes - shown;
    record.cutBytes += cut;
    text =
      `${head}\n\n[… output cut by the output budget: ${formatBytes(textBytes)} bytes in total, ` +
      `${formatBytes(shown)} shown (head and tail), ${formatBytes(cut)} cut. Full output: ${path}` +
      `${spill === undefined ? '' : ' (read it in parts with a file tool)'} …]\n\n${tail}`;
  }
  if (structuredNote !== '') text = text === '' ? structuredNote : `${text}\n${structuredNote}`;
  if (dropped > 0) {
    text += `${text === '' ? '' : '\n'}[${dropped} more content item(s) dropped by the output budget (cap ${limits.maxItems} items).]`;
  }
  const textItem: ContentItem = { type: 'text', text };
  if (textSlot === -1) {
    if (text !== '') kept.unshift(textItem);
  } else {
    kept[textSlot] = textItem;
  }
  // Text resources that fit are kept verbatim only when the text was not cut (else they are in the spill).
  if (textBytes <= budget) {
    for (const item of content)
      if (item.type === 'resource' && 'text' in item.resource) kept.push(item);
  }
  record.keptBytes += Buffer.byteLength(text, 'utf8');
  record.estimatedTokens = Math.ceil(record.keptBytes / BYTES_PER_TOKEN);

  const { structuredContent: _dropped, ...rest } = result;
  return {
    ...rest,
    ...(structuredContent === undefined ? {} : { structuredContent }),
    content: kept,
    _meta: { ...result._meta, [ResultMetaKey.Budget]: record },
  };
}

/** Options of {@link createFileSpill}. */
export interface FileSpillOptions {
  /** Folder under `root` for spilled files (logical, `/`-separated). Default `.agents-output`. */
  dir?: string;
}

/**
 * A {@link Spill} that writes files under `root` (the sandbox root) and returns the logical path
 * `dir/<time>-<call>.<ext>`, relative to `root`, which the model's file tools can read.
 * Names use only `[A-Za-z0-9_.-]`, so a tool call id cannot steer the file out of `dir`.
 */
export function createFileSpill(root: string, options: FileSpillOptions = {}): Spill {
  const dir = (options.dir ?? '.agents-output').replace(/\\/g, '/').replace(/^\/+|\/+$/g, '');
  if (dir.split('/').some((part) => part === '..' || part === '')) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `createFileSpill: dir "${options.dir ?? ''}" must be a relative folder without "..".`,
      { details: { dir: options.dir } },
    );
  }
  return async (content, info) => {
    const id = (info.toolCallId ?? randomBytes(6).toString('hex'))
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(0, 64);
    const tool = info.toolId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const name = `${stamp}-${tool}-${id}-${info.kind}.${info.extension.replace(/[^A-Za-z0-9]/g, '') || 'bin'}`;
    const folder = join(root, ...dir.split('/'));
    await mkdir(folder, { recursive: true });
    // A hostile checkout can ship the spill folder (or a parent) as a symlink to somewhere
    // else; write only when the folder's real location is inside the root's.
    const [realRoot, realFolder] = await Promise.all([realpath(root), realpath(folder)]);
    const inside = relative(realRoot, realFolder);
    if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
      throw new AgentsError(
        AgentsErrorCode.PathOutsideSandbox,
        `The spill folder "${dir}" resolves outside ${root} (to ${realFolder}); the full output was not written. ` +
          'Remove that symlink or pass another dir to createFileSpill.',
        { details: { dir, root, resolved: realFolder } },
      );
    }
    // "wx": never overwrite, nor follow a link planted at the file name.
    await writeFile(join(realFolder, name), content, { flag: 'wx' });
    return posix.join(dir, name);
  };
}
