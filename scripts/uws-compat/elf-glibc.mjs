// Reads and rewrites the glibc symbol versions an ELF64 little-endian shared object asks
// for. Pure functions over a Buffer: install.mjs does the files, the unit test the cases.

import { cstring, sections, SHT_DYNSYM } from './elf.mjs';

const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const VER_FLG_WEAK = 0x2;

/**
 * glibc 2.38 added C23 variants that differ from the classic functions only in accepting
 * a `0b` prefix; uWS never parses binary literals, so the classic ones serve it the same.
 */
export const C23_RENAMES = new Map([
  ['__isoc23_sscanf', 'sscanf'],
  ['__isoc23_strtol', 'strtol'],
  ['__isoc23_strtoul', 'strtoul'],
]);

/** The version every architecture's libc.so.6 started at: what an unversioned classic symbol binds to. */
export const LIBC_BASE_VERSION = { x64: 'GLIBC_2.2.5', arm64: 'GLIBC_2.17' };

/** Compares glibc version names numerically: GLIBC_2.2.5 < GLIBC_2.17 < GLIBC_2.38. */
export function compareGlibc(a, b) {
  const pa = a.replace(/^GLIBC_/, '').split('.').map(Number);
  const pb = b.replace(/^GLIBC_/, '').split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The dynamic symbols with the version each asks for, and the libc version needs. */
export function readGlibcNeeds(buf) {
  const all = sections(buf);
  const dynsym = all.find((s) => s.type === SHT_DYNSYM);
  const versym = all.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = all.find((s) => s.type === SHT_GNU_VERNEED);
  if (!dynsym || !versym || !verneed) throw new Error('no dynamic symbol versions in this file');
  const strtab = all[dynsym.link].offset;

  const needs = []; // {file, name, index, flagsAt}
  let at = verneed.offset;
  for (let n = 0; n < verneed.info; n++) {
    const file = cstring(buf, strtab + buf.readUInt32LE(at + 4));
    let aux = at + buf.readUInt32LE(at + 8);
    for (let k = 0; k < buf.readUInt16LE(at + 2); k++) {
      needs.push({
        file,
        name: cstring(buf, strtab + buf.readUInt32LE(aux + 8)),
        index: buf.readUInt16LE(aux + 6),
        flags: buf.readUInt16LE(aux + 4),
        flagsAt: aux + 4,
      });
      aux += buf.readUInt32LE(aux + 12);
    }
    at += buf.readUInt32LE(at + 12);
  }

  const symbols = [];
  for (let i = 0; i < dynsym.size / 24; i++) {
    const symAt = dynsym.offset + i * 24;
    const nameOffset = buf.readUInt32LE(symAt);
    const index = buf.readUInt16LE(versym.offset + i * 2) & 0x7fff;
    symbols.push({ name: cstring(buf, strtab + nameOffset), symAt, versymAt: versym.offset + i * 2, index, nameOffset });
  }
  return { needs, symbols };
}

/**
 * Rewrites `buf` in place so it loads on glibc `runtime`: each C23 symbol is pointed at the
 * classic name (the tail of its own string, so no string table grows) with the libc base
 * version, and the version needs above `runtime` become weak. Throws, naming them, when a
 * symbol needs a newer glibc for any other reason: that binary cannot be helped.
 */
export function patchForGlibc(buf, runtime, arch) {
  const base = LIBC_BASE_VERSION[arch];
  if (!base) throw new Error(`no libc base version known for ${arch}`);
  const { needs, symbols } = readGlibcNeeds(buf);
  const libc = needs.filter((v) => v.file === 'libc.so.6');
  const baseNeed = libc.find((v) => v.name === base);
  if (!baseNeed) throw new Error(`the binary does not ask libc.so.6 for ${base}`);
  const tooNew = new Map(
    needs.filter((v) => v.name.startsWith('GLIBC_') && compareGlibc(v.name, `GLIBC_${runtime}`) > 0).map((v) => [v.index, v]),
  );

  const renamed = [];
  const unmet = [];
  for (const sym of symbols) {
    if (!tooNew.has(sym.index)) continue;
    const classic = C23_RENAMES.get(sym.name);
    if (!classic) {
      unmet.push(`${sym.name}@${tooNew.get(sym.index).name}`);
      continue;
    }
    buf.writeUInt32LE(sym.nameOffset + (sym.name.length - classic.length), sym.symAt);
    buf.writeUInt16LE(baseNeed.index, sym.versymAt);
    renamed.push(`${sym.name} -> ${classic}@${base}`);
  }
  if (unmet.length > 0) {
    throw new Error(`needs a newer glibc than ${runtime} for: ${unmet.join(', ')}`);
  }
  for (const need of tooNew.values()) buf.writeUInt16LE(need.flags | VER_FLG_WEAK, need.flagsAt);
  return { renamed, weakened: [...tooNew.values()].map((v) => v.name) };
}
