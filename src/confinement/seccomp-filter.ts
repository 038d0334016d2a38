/**
 * The seccomp filter every confined server runs under, compiled here to classic BPF (the
 * `struct sock_filter` array bubblewrap's `--seccomp FD` reads) with no native dependency.
 *
 * Why: capabilities are already dropped (`--cap-drop ALL` in a user namespace of its own), so
 * these calls fail anyway for a server; the filter is the second wall, for a kernel bug or a
 * capability that leaks back in (a nested user namespace gives its creator every capability
 * inside it). It refuses with EPERM (programs handle a refusal; a killed server tells nothing):
 * - mounts and namespaces: mount, umount2, pivot_root, chroot, the new mount API (open_tree,
 *   move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr, open_tree_attr), setns,
 *   unshare, and clone with any CLONE_NEW* flag; clone3 gets ENOSYS (its flags sit in memory a
 *   filter cannot read), so the C library falls back to clone, which is checked;
 * - other processes and the kernel: ptrace, process_vm_readv/writev, keyctl, add_key,
 *   request_key, bpf, perf_event_open, userfaultfd, kexec_load, kexec_file_load, init_module,
 *   finit_module, delete_module, open_by_handle_at, reboot, swapon, swapoff, syslog, acct,
 *   quotactl, quotactl_fd, lookup_dcookie, vhangup, settimeofday, clock_settime, clock_adjtime,
 *   fanotify_init, and on x86_64 uselib, ioperm, iopl;
 * - typing into the terminal: ioctl TIOCSTI and TIOCLINUX.
 * The architecture is checked first: x86_64 and aarch64 are known; any other (a 32-bit binary
 * on x86_64, whose numbers differ) kills the process, and x32 calls on x86_64 are refused.
 */

/** Syscall numbers per architecture (x86_64: asm/unistd_64.h; aarch64: asm-generic/unistd.h). */
const REFUSED: Record<string, { x86_64?: number; aarch64?: number }> = {
  mount: { x86_64: 165, aarch64: 40 },
  umount2: { x86_64: 166, aarch64: 39 },
  pivot_root: { x86_64: 155, aarch64: 41 },
  chroot: { x86_64: 161, aarch64: 51 },
  open_tree: { x86_64: 428, aarch64: 428 },
  move_mount: { x86_64: 429, aarch64: 429 },
  fsopen: { x86_64: 430, aarch64: 430 },
  fsconfig: { x86_64: 431, aarch64: 431 },
  fsmount: { x86_64: 432, aarch64: 432 },
  fspick: { x86_64: 433, aarch64: 433 },
  mount_setattr: { x86_64: 442, aarch64: 442 },
  open_tree_attr: { x86_64: 467, aarch64: 467 },
  setns: { x86_64: 308, aarch64: 268 },
  unshare: { x86_64: 272, aarch64: 97 },
  ptrace: { x86_64: 101, aarch64: 117 },
  process_vm_readv: { x86_64: 310, aarch64: 270 },
  process_vm_writev: { x86_64: 311, aarch64: 271 },
  keyctl: { x86_64: 250, aarch64: 219 },
  add_key: { x86_64: 248, aarch64: 217 },
  request_key: { x86_64: 249, aarch64: 218 },
  bpf: { x86_64: 321, aarch64: 280 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  userfaultfd: { x86_64: 323, aarch64: 282 },
  kexec_load: { x86_64: 246, aarch64: 104 },
  kexec_file_load: { x86_64: 320, aarch64: 294 },
  init_module: { x86_64: 175, aarch64: 105 },
  finit_module: { x86_64: 313, aarch64: 273 },
  delete_module: { x86_64: 176, aarch64: 106 },
  open_by_handle_at: { x86_64: 304, aarch64: 265 },
  reboot: { x86_64: 169, aarch64: 142 },
  swapon: { x86_64: 167, aarch64: 224 },
  swapoff: { x86_64: 168, aarch64: 225 },
  syslog: { x86_64: 103, aarch64: 116 },
  acct: { x86_64: 163, aarch64: 89 },
  quotactl: { x86_64: 179, aarch64: 60 },
  quotactl_fd: { x86_64: 443, aarch64: 443 },
  lookup_dcookie: { x86_64: 212, aarch64: 18 },
  vhangup: { x86_64: 153, aarch64: 58 },
  settimeofday: { x86_64: 164, aarch64: 170 },
  clock_settime: { x86_64: 227, aarch64: 112 },
  clock_adjtime: { x86_64: 305, aarch64: 266 },
  fanotify_init: { x86_64: 300, aarch64: 262 },
  uselib: { x86_64: 134 },
  ioperm: { x86_64: 173 },
  iopl: { x86_64: 172 },
};

/** The refused system calls' names (for docs and `agents doctor`). */
export const REFUSED_SYSCALLS: readonly string[] = Object.keys(REFUSED);

const ARCHES = {
  x86_64: { audit: 0xc000003e, ioctl: 16, clone: 56, clone3: 435 },
  aarch64: { audit: 0xc00000b7, ioctl: 29, clone: 220, clone3: 435 },
} as const;
type Arch = keyof typeof ARCHES;

// Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const LD_ABS_W = 0x20;
const JEQ = 0x15;
const JGE = 0x35;
const JSET = 0x45;
const RET = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;
// struct seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 i (low 32 bits first, little-endian).
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;
const ARG1_LOW = 24;
const X32_SYSCALL_BIT = 0x40000000;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
// CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME.
const CLONE_NAMESPACES =
  0x00020000 |
  0x02000000 |
  0x04000000 |
  0x08000000 |
  0x10000000 |
  0x20000000 |
  0x40000000 |
  0x00000080;

/** One instruction; `jt`/`jf` name labels (resolved to forward offsets), absent: next. */
interface Instruction {
  code: number;
  k: number;
  jt?: string;
  jf?: string;
  label?: string;
}

function archBlock(arch: Arch): Instruction[] {
  const { ioctl, clone, clone3 } = ARCHES[arch];
  const deny = `${arch}:deny`;
  const block: Instruction[] = [{ code: LD_ABS_W, k: NR, label: arch }];
  if (arch === 'x86_64') block.push({ code: JGE, k: X32_SYSCALL_BIT, jt: deny });
  for (const numbers of Object.values(REFUSED)) {
    const nr = numbers[arch];
    if (nr !== undefined) block.push({ code: JEQ, k: nr, jt: deny });
  }
  block.push(
    { code: JEQ, k: ioctl, jt: `${arch}:ioctl` },
    { code: JEQ, k: clone, jt: `${arch}:clone` },
    { code: JEQ, k: clone3, jt: `${arch}:enosys` },
    { code: RET, k: RET_ALLOW },
    { code: LD_ABS_W, k: ARG1_LOW, label: `${arch}:ioctl` },
    { code: JEQ, k: TIOCSTI, jt: deny },
    { code: JEQ, k: TIOCLINUX, jt: deny },
    { code: RET, k: RET_ALLOW },
    { code: LD_ABS_W, k: ARG0_LOW, label: `${arch}:clone` },
    { code: JSET, k: CLONE_NAMESPACES, jt: deny },
    { code: RET, k: RET_ALLOW },
    { code: RET, k: RET_ERRNO | ENOSYS, label: `${arch}:enosys` },
    { code: RET, k: RET_ERRNO | EPERM, label: deny },
  );
  return block;
}

/** The program: the architecture check, then one block per known architecture. */
export function seccompProgram(): Instruction[] {
  return [
    { code: LD_ABS_W, k: ARCH },
    { code: JEQ, k: ARCHES.x86_64.audit, jt: 'x86_64' },
    { code: JEQ, k: ARCHES.aarch64.audit, jt: 'aarch64' },
    { code: RET, k: RET_KILL_PROCESS },
    ...archBlock('x86_64'),
    ...archBlock('aarch64'),
  ];
}

/**
 * The compiled filter: 8 bytes per instruction (u16 code, u8 jt, u8 jf, u32 k, host byte order:
 * both architectures are little-endian), as bubblewrap's `--seccomp FD` reads it.
 *
 * @throws Error when a jump does not fit (a program too long for 8-bit offsets: a bug here).
 */
export function compileSeccompFilter(program: readonly Instruction[] = seccompProgram()): Buffer {
  const labels = new Map<string, number>();
  program.forEach((instruction, index) => {
    if (instruction.label !== undefined) labels.set(instruction.label, index);
  });
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const target = labels.get(label);
    const jump = target === undefined ? -1 : target - from - 1;
    if (jump < 0 || jump > 255) throw new Error(`seccomp filter: jump to ${label} does not fit`);
    return jump;
  };
  const out = Buffer.alloc(program.length * 8);
  program.forEach((instruction, index) => {
    out.writeUInt16LE(instruction.code, index * 8);
    out.writeUInt8(offset(index, instruction.jt), index * 8 + 2);
    out.writeUInt8(offset(index, instruction.jf), index * 8 + 3);
    out.writeUInt32LE(instruction.k >>> 0, index * 8 + 4);
  });
  return out;
}
