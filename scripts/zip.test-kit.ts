// Reads the release's zips in tests, apart from the writer (scripts/zip.mjs), so a test of one checks the other.
import { crc32 } from "node:zlib";
import { expect } from "vitest";

/** One entry of a zip: its name, bytes, UNIX mode and MS-DOS time and date. */
export interface ZipEntry {
  name: string;
  data: Buffer;
  mode: number;
  time: number;
  date: number;
}

/** Reads a zip by its central directory (APPNOTE 4.3.12, 4.3.16), checking each local header and CRC-32. */
export function readZip(zip: Buffer): ZipEntry[] {
  const end = zip.length - 22;
  expect(zip.readUInt32LE(end)).toBe(0x06054b50);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    expect(zip.readUInt32LE(at)).toBe(0x02014b50);
    expect(zip.readUInt16LE(at + 10)).toBe(0); // stored
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString("utf8");
    expect(zip.readUInt32LE(local)).toBe(0x04034b50);
    expect(zip.subarray(local + 30, local + 30 + nameLength).toString("utf8")).toBe(name);
    const start = local + 30 + nameLength + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    expect(crc32(data)).toBe(zip.readUInt32LE(at + 16));
    entries.push({
      name,
      data,
      mode: zip.readUInt32LE(at + 38) >>> 16,
      time: zip.readUInt16LE(at + 12),
      date: zip.readUInt16LE(at + 14),
    });
    at += 46 + nameLength + skip;
  }
  return entries;
}
