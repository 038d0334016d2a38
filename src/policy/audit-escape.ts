/**
 * Escaping for the audit: what a server sends (a SOCKS5 domain, a host header, an error text)
 * lands in audit fields, and an audit that prints a raw newline or ANSI escape can be made to
 * show a line nobody wrote (a forged `ALLOWED`) or to repaint the terminal. Two choke points:
 * every line written to the log goes through {@link safeJsonLine}, every line printed for a
 * person through {@link printable}.
 */

/**
 * Characters that change how text is laid out or shown rather than being shown: C0 controls
 * (newline, carriage return, ESC…), DEL, C1 controls (U+009B is a one-character CSI for some
 * terminals), the Unicode line and paragraph separators, bidirectional overrides and isolates
 * (they reorder what a reader sees), zero-width characters and the byte-order mark.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

const NAMED: Readonly<Record<string, string>> = {
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

function visible(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text safe to print on one terminal line: every unsafe character becomes a visible escape
 * (`\n`, `\x1b`, `\u202e`), and a backslash becomes `\\` so an escape printed here can never be
 * mistaken for one the text itself spelled out.
 */
export function printable(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(UNSAFE, visible);
}

/**
 * One JSON line with no unsafe character in it: JSON.stringify already escapes C0 controls and
 * lone surrogates; the rest (C1, separators, bidi, zero-width) become `\uXXXX` escapes, which
 * are valid inside JSON strings and parse back to the same value. Lossless, one line, and
 * `cat`, `grep` or `jq -c` on the log show nothing raw.
 */
export function safeJsonLine(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(
    UNSAFE,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
