/** The `network:` setting of an actor's sandbox and of one server: on, off, or host lists. */
import { z } from 'zod';

/**
 * One host pattern: `example.com`, `*.example.com` (any subdomain, not the bare name), either
 * with an optional `:port`, or an IP literal (`10.0.0.5:5432`, `[::1]:8080`). Checked here so a
 * typo fails at load, not when a server first connects.
 */
export const HOST_PATTERN =
  /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::\d{1,5})?$|^\[[0-9a-f:.]+\](?::\d{1,5})?$/i;

const HostPatternSchema = z
  .string()
  .regex(HOST_PATTERN, {
    message:
      'must be a host name (`api.example.com`), a `*.` wildcard (`*.example.com`) or an IP literal, with an optional `:port`',
  })
  .refine((value) => validPort(value), { message: 'port must be 1-65535' });

// Only a port can end in `:digits` here: an IPv6 literal must be in brackets.
function validPort(pattern: string): boolean {
  const match = /:(\d+)$/.exec(pattern);
  return match === null || (Number(match[1]) >= 1 && Number(match[1]) <= 65535);
}

/** Host lists: deny wins over allow; a host on neither list is refused. */
export const NetworkListsSchema = z
  .strictObject({
    allow: z
      .array(HostPatternSchema)
      .default([])
      .describe('Hosts a server may reach through the proxy (`*.` wildcards, optional `:port`).'),
    deny: z
      .array(HostPatternSchema)
      .default([])
      .describe('Hosts always refused, even when an allow pattern matches too.'),
  })
  .describe('Network host lists.');
export type NetworkLists = z.infer<typeof NetworkListsSchema>;

/**
 * `true`: the server's own network (as before); `false`: none (loopback only in its namespace);
 * `{ allow, deny }`: no network of its own, the outside only through the library's proxy.
 */
export const NetworkSettingSchema = z
  .union([z.boolean(), NetworkListsSchema])
  .describe(
    'Network for confined stdio servers (and host lists for remote servers): true (default) leaves it on; false cuts it (loopback only); `{ allow: [...], deny: [...] }` gives the server no network of its own and lets it reach only the allowed hosts through a proxy the library runs (deny wins; a host on no list is refused; private, loopback, link-local and metadata addresses are refused unless an allow entry names the IP literally). Remote servers are checked against the same lists at connect time, redirects included.',
  );
export type NetworkSetting = z.infer<typeof NetworkSettingSchema>;
