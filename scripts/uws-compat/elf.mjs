// Section headers and dynamic symbols of an ELF64 little-endian shared object, read from a
// Buffer: the parts the install-time patches (elf-glibc.mjs, upgrade-warning.mjs) share.

export const SHT_DYNSYM = 11;

export function cstring(buf, at) {
  const end = buf.indexOf(0, at);
  return buf.toString('latin1', at, end);
}

export function sections(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46 || buf[4] !== 2 || buf[5] !== 1) {
    throw new Error('not a 64-bit little-endian ELF file');
  }
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const list = [];
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    list.push({
      type: buf.readUInt32LE(at + 4),
      addr: Number(buf.readBigUInt64LE(at + 16)),
      offset: Number(buf.readBigUInt64LE(at + 24)),
      size: Number(buf.readBigUInt64LE(at + 32)),
      link: buf.readUInt32LE(at + 40),
      info: buf.readUInt32LE(at + 44),
    });
  }
  return list;
}

/** Where the exported function `name` (its mangled name) lies in the file: [start, end) offsets. */
export function functionRange(buf, name) {
  const all = sections(buf);
  const dynsym = all.find((s) => s.type === SHT_DYNSYM);
  if (!dynsym) throw new Error('no dynamic symbols in this file');
  const strtab = all[dynsym.link].offset;
  for (let at = dynsym.offset; at < dynsym.offset + dynsym.size; at += 24) {
    if (cstring(buf, strtab + buf.readUInt32LE(at)) !== name) continue;
    const value = Number(buf.readBigUInt64LE(at + 8));
    const size = Number(buf.readBigUInt64LE(at + 16));
    const section = all[buf.readUInt16LE(at + 6)];
    if (!section || size === 0) break;
    const start = value - section.addr + section.offset;
    return { start, end: start + size };
  }
  throw new Error(`no function ${name} in this file`);
}
