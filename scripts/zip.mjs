// A deterministic zip writer for the release's skill bundle (no `zip` on the build machine is assumed): entries
// stored uncompressed, sorted by name, with one fixed timestamp and fixed modes, so the same files always give the
// same bytes on every machine and Node version (APPNOTE.TXT 6.3: local headers, central directory, end record).
import { crc32 } from "node:zlib";

// 1980-01-01 00:00:00, the earliest MS-DOS date: the zip's every timestamp.
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const DOS_TIME = 0;
// Made by 3 (UNIX) version 2.0, so unzip applies the modes in the external attributes.
const MADE_BY = (3 << 8) | 20;
const NEEDED = 20;
// Bit 11: names are UTF-8.
const FLAGS = 1 << 11;
const FILE_MODE = 0o100644;
const DIR_MODE = 0o040755;

/**
 * The zip of `files` (name → content; names use "/", a name ending in "/" is a folder) with every folder on the
 * way to a file listed too. Throws on a name that is absolute, has "." or ".." parts, or does not fit the format.
 * @param {Record<string, string | Uint8Array>} files
 * @returns {Buffer}
 */
export function zipStored(files) {
  const entries = new Map();
  for (const [name, content] of Object.entries(files)) {
    checkName(name);
    const parts = name.split("/");
    for (let i = 1; i < parts.length; i++) {
      const folder = `${parts.slice(0, i).join("/")}/`;
      if (!entries.has(folder)) entries.set(folder, Buffer.alloc(0));
    }
    if (!name.endsWith("/")) entries.set(name, Buffer.from(content));
  }
  const names = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const name of names) {
    const data = entries.get(name);
    const header = { name: Buffer.from(name, "utf8"), data, crc: crc32(data), offset };
    const local = localHeader(header);
    locals.push(local, data);
    centrals.push(centralHeader(header, name.endsWith("/") ? DIR_MODE : FILE_MODE));
    offset += local.length + data.length;
  }
  const central = Buffer.concat(centrals);
  if (offset + central.length > 0xffffffff || names.length > 0xffff) {
    throw new Error("zip: too large for a zip without ZIP64");
  }
  return Buffer.concat([...locals, central, endRecord(names.length, central.length, offset)]);
}

function checkName(name) {
  const parts = name.replace(/\/$/, "").split("/");
  if (
    name.length === 0 ||
    name.startsWith("/") ||
    name.includes("\\") ||
    parts.some((p) => p === "" || p === "." || p === "..")
  ) {
    throw new Error(`zip: bad entry name ${JSON.stringify(name)}`);
  }
  if (Buffer.byteLength(name) > 0xffff) throw new Error(`zip: entry name too long ${JSON.stringify(name)}`);
}

function localHeader({ name, data, crc }) {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(NEEDED, 4);
  header.writeUInt16LE(FLAGS, 6);
  header.writeUInt16LE(0, 8); // stored
  header.writeUInt16LE(DOS_TIME, 10);
  header.writeUInt16LE(DOS_DATE, 12);
  header.writeUInt32LE(crc, 14);
  header.writeUInt32LE(data.length, 18);
  header.writeUInt32LE(data.length, 22);
  header.writeUInt16LE(name.length, 26);
  header.writeUInt16LE(0, 28);
  return Buffer.concat([header, name]);
}

function centralHeader({ name, data, crc, offset }, mode) {
  const header = Buffer.alloc(46);
  header.writeUInt32LE(0x02014b50, 0);
  header.writeUInt16LE(MADE_BY, 4);
  header.writeUInt16LE(NEEDED, 6);
  header.writeUInt16LE(FLAGS, 8);
  header.writeUInt16LE(0, 10);
  header.writeUInt16LE(DOS_TIME, 12);
  header.writeUInt16LE(DOS_DATE, 14);
  header.writeUInt32LE(crc, 16);
  header.writeUInt32LE(data.length, 20);
  header.writeUInt32LE(data.length, 24);
  header.writeUInt16LE(name.length, 28);
  // Extra and comment lengths, disk number, internal attributes: 0.
  header.writeUInt32LE(((mode << 16) | (mode & 0o040000 ? 0x10 : 0)) >>> 0, 38);
  header.writeUInt32LE(offset, 42);
  return Buffer.concat([header, name]);
}

function endRecord(count, size, offset) {
  const record = Buffer.alloc(22);
  record.writeUInt32LE(0x06054b50, 0);
  record.writeUInt16LE(count, 8);
  record.writeUInt16LE(count, 10);
  record.writeUInt32LE(size, 12);
  record.writeUInt32LE(offset, 16);
  return record;
}
