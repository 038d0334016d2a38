import { pathToFileURL } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/client';

/** The spellings of a sandbox root and of the user's project that results may quote. */
export interface ResultPathForms {
  /** The root's forms (realpath and lexical). */
  rootForms: readonly string[];
  /** The project's forms (aliases), which map back as the root does. */
  aliasForms: readonly string[];
  /** The alias `file://` URIs of the root map to, when one is known. */
  primaryAlias: string | undefined;
}

/**
 * Builds the mapping from sandbox (and project) paths in text back to logical paths: one regex
 * over every form of the root, built once. `file://` forms come first so a URI is never
 * half-mapped into `file://src/...`. The negative lookahead stops `/x/run-1` from matching
 * inside `/x/run-10` (component boundary, not string prefix).
 */
export function createFromSandbox(forms: ResultPathForms): (text: string) => string {
  const { rootForms, aliasForms } = forms;
  const uriForms = unique(
    rootForms.flatMap((form) => [pathToFileURL(form).href, `file://${form}`]),
  );
  const uriAlias =
    forms.primaryAlias === undefined ? undefined : pathToFileURL(forms.primaryAlias).href;
  // Plain project paths map back too (a server under confinement sees the sandbox at the
  // project's path, and quotes it): the model never needs a host path.
  const alternatives = [...uriForms, ...rootForms, ...aliasForms]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|');
  // A "." ends the match only when prose goes on after it ("root is /wt."), not in "/wt.bak".
  const pattern = new RegExp(`(?:${alternatives})(?![\\w~@+%-]|\\.[^\\s"'\`,;)\\]}>])(/)?`, 'g');
  // Text that holds none of these has nothing to map (the common case): the root forms, plus
  // the `file://` forms that do not contain one (a root with characters a URI percent-encodes).
  const needles = [
    ...rootForms,
    ...aliasForms,
    ...uriForms.filter(
      (form) => ![...rootForms, ...aliasForms].some((plain) => form.includes(plain)),
    ),
  ];
  return (text: string): string => {
    let found = false;
    for (let index = 0; index < needles.length && !found; index++) {
      found = text.includes(needles[index]!);
    }
    if (!found) return text;
    return text.replace(pattern, (match: string, slash: string | undefined, offset: number) => {
      if (/^file:/i.test(match)) {
        if (uriAlias === undefined) return match;
        return slash === undefined ? uriAlias : `${uriAlias}/`;
      }
      if (slash === undefined) return '.';
      const after = text.charAt(offset + match.length);
      return after === '' || /[\s"'`,;)\]}>]/.test(after) ? './' : '';
    });
  };
}

/** Maps every string in a JSON-like value, copying only the containers that change. */
function mapStrings(value: unknown, depth: number, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (depth > 64 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item: unknown) => {
      const mapped = mapStrings(item, depth + 1, map);
      if (mapped !== item) changed = true;
      return mapped;
    });
    return changed ? out : value;
  }
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const mapped = mapStrings(item, depth + 1, map);
    if (mapped !== item) {
      out ??= { ...(value as Record<string, unknown>) };
      Object.defineProperty(out, key, {
        value: mapped,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out ?? value;
}

/** See `SandboxPathMap.rewriteResult`. */
export function rewriteResultWith(
  result: CallToolResult,
  fromSandbox: (text: string) => string,
): CallToolResult {
  let content: CallToolResult['content'] | undefined;
  const items = Array.isArray(result.content) ? result.content : [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (item === undefined) continue; // a hole, which forEach skipped too
    const mapped = mapContentItem(item, fromSandbox);
    if (mapped !== item) {
      content ??= [...items];
      content[index] = mapped;
    }
  }
  const structured =
    result.structuredContent === undefined
      ? undefined
      : mapStrings(result.structuredContent, 0, fromSandbox);
  if (content === undefined && structured === result.structuredContent) return result;
  return {
    ...result,
    ...(content === undefined ? {} : { content }),
    ...(structured === result.structuredContent
      ? {}
      : { structuredContent: structured as Record<string, unknown> }),
  };
}

/** See `SandboxPathMap.rewriteError`. */
export function rewriteErrorWith<T>(error: T, fromSandbox: (text: string) => string): T {
  if (!(error instanceof Error)) return error;
  const message = fromSandbox(error.message);
  if (message !== error.message) {
    Object.defineProperty(error, 'message', {
      value: message,
      enumerable: false,
      writable: true,
      configurable: true,
    });
    if (typeof error.stack === 'string') error.stack = fromSandbox(error.stack);
  }
  return error;
}

type ContentItem = CallToolResult['content'][number];

function mapContentItem(item: ContentItem, map: (text: string) => string): ContentItem {
  switch (item.type) {
    case 'text': {
      const text = map(item.text);
      return text === item.text ? item : { ...item, text };
    }
    case 'resource_link': {
      const uri = map(item.uri);
      const description = item.description === undefined ? undefined : map(item.description);
      if (uri === item.uri && description === item.description) return item;
      return { ...item, uri, ...(description === undefined ? {} : { description }) };
    }
    case 'resource': {
      const resource = item.resource;
      const uri = map(resource.uri);
      const text =
        'text' in resource && typeof resource.text === 'string' ? map(resource.text) : undefined;
      const textChanged = text !== undefined && 'text' in resource && text !== resource.text;
      if (uri === resource.uri && !textChanged) return item;
      return {
        ...item,
        resource: { ...resource, uri, ...(textChanged ? { text } : {}) },
      } as ContentItem;
    }
    default:
      return item;
  }
}

export function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
