/**
 * The resolved-address check: a host name the lists allow must still not lead to loopback,
 * private or link-local ranges, cloud metadata, or this machine's own addresses, whichever way
 * the address is written (IPv4 inside IPv6 included).
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';

/** Why an address is refused; absent when it is a public address. */
export type AddressClass =
  'loopback' | 'private' | 'link-local' | 'metadata' | 'host-address' | 'reserved' | 'unspecified';

const V4_RANGES: ReadonlyArray<[string, number, AddressClass]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['127.0.0.0', 8, 'loopback'],
  ['10.0.0.0', 8, 'private'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['100.64.0.0', 10, 'private'], // carrier-grade NAT
  ['169.254.0.0', 16, 'link-local'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'reserved'], // multicast
  ['240.0.0.0', 4, 'reserved'], // reserved and broadcast
];

const V6_RANGES: ReadonlyArray<[string, number, AddressClass]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
];

/** Cloud metadata endpoints, named as such in refusals (they sit inside the ranges above too). */
const METADATA = new Set(
  ['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200'].map(
    (address) => addressForms(address)[0]!,
  ),
);

const lists = new Map<AddressClass, BlockList>();
for (const [network, prefix, kind] of [...V4_RANGES, ...V6_RANGES]) {
  let list = lists.get(kind);
  if (list === undefined) lists.set(kind, (list = new BlockList()));
  list.addSubnet(network, prefix, isIPv4(network) ? 'ipv4' : 'ipv6');
}

/** The class of a refused address, or undefined for an address the proxy may connect to. */
export function classifyAddress(
  address: string,
  ownAddresses: ReadonlySet<string> = hostAddresses(),
): AddressClass | undefined {
  const forms = addressForms(address);
  if (forms.length === 0) return 'reserved'; // not an IP at all: never connect to it
  if (forms.some((form) => METADATA.has(form))) return 'metadata';
  for (const form of forms) {
    const type = isIPv4(form) ? 'ipv4' : 'ipv6';
    for (const [kind, list] of lists) if (list.check(form, type)) return kind;
  }
  return forms.some((form) => ownAddresses.has(form)) ? 'host-address' : undefined;
}

/**
 * The address plus every IPv4 address hidden in it: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002:AABB:CCDD::`).
 */
export function addressForms(address: string): string[] {
  const plain = address
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .toLowerCase();
  if (isIPv4(plain)) return [plain];
  if (!isIPv6(plain)) return [];
  const words = ipv6Words(plain);
  // One spelling per address (all eight words, no leading zeros) so sets compare equal.
  const forms = [words.map((word) => word.toString(16)).join(':')];
  const v4 = (high: number, low: number): string =>
    [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  const zeros = (from: number, to: number): boolean => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) forms.push(v4(words[6]!, words[7]!));
  else if (zeros(0, 6) && (words[6] !== 0 || words[7]! > 1)) forms.push(v4(words[6]!, words[7]!));
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) forms.push(v4(words[6]!, words[7]!));
  if (words[0] === 0x2002) forms.push(v4(words[1]!, words[2]!));
  return forms;
}

/** The eight 16-bit words of a valid IPv6 address (dotted tail and `::` expanded). */
function ipv6Words(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined): number[] =>
    part === undefined || part === '' ? [] : part.split(':').map((word) => parseInt(word, 16));
  const front = parse(head);
  const back = parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - front.length - back.length).fill(0);
  return [...front, ...fill, ...back];
}

let cachedOwn: { at: number; set: Set<string> } | undefined;

/** This machine's interface addresses (all forms), re-read at most every 10 s. */
export function hostAddresses(): ReadonlySet<string> {
  const now = Date.now();
  if (cachedOwn !== undefined && now - cachedOwn.at < 10_000) return cachedOwn.set;
  const set = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? [])
      for (const form of addressForms(entry.address)) set.add(form);
  }
  cachedOwn = { at: now, set };
  return set;
}
