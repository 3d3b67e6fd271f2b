// A word a POSIX shell reads back as exactly this text: hook commands written into agent configs, and the
// commands ivoai prints for a person to paste.

/** POSIX single quotes where the text needs them. */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
