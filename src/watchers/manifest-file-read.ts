// One manifest file's text, read only when it is a regular file of at most the size limit. Opening
// a FIFO for reading blocks until a writer comes (for good, in a libuv thread that SIGTERM then
// waits on), a device may be endless, and a 50 MB manifest holds the parser for seconds: each is
// a named problem instead. The file is opened non-blocking and its own descriptor is checked, so a
// name swapped for a FIFO between a stat and the open is still refused without waiting.
import { constants } from "node:fs";
import { open, stat } from "node:fs/promises";

/** `--max-manifest-bytes`' default: far above any hand-written manifest, far below what stalls the parser. */
export const DEFAULT_MAX_MANIFEST_BYTES = 8 * 1024 * 1024;

export type FileText = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly message: string };

/** What a stat says the entry is, when it is not a regular file. */
export function notRegular(s: {
  isFile(): boolean;
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string | undefined {
  if (s.isFile()) return undefined;
  const what = s.isDirectory()
    ? "a directory"
    : s.isFIFO()
      ? "a FIFO (named pipe)"
      : s.isSocket()
        ? "a socket"
        : s.isCharacterDevice() || s.isBlockDevice()
          ? "a device"
          : "a special file";
  return `not a regular file: it is ${what}; only regular files are read`;
}

export function tooLarge(size: number, maxBytes: number): string {
  return `${String(size)} bytes, over the limit of ${String(maxBytes)} bytes per manifest file (--max-manifest-bytes)`;
}

/** The file's text; a message (without the path) when it is not a regular file, too large, or unreadable. */
export async function readManifestText(path: string, maxBytes: number): Promise<FileText> {
  try {
    // A stat first: a device is never opened at all (opening one may have effects of its own).
    const refused = notRegular(await stat(path));
    if (refused !== undefined) return { ok: false, message: refused };
    const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const s = await handle.stat();
      const swapped = notRegular(s);
      if (swapped !== undefined) return { ok: false, message: swapped };
      if (s.size > maxBytes) return { ok: false, message: tooLarge(s.size, maxBytes) };
      // Read at most one byte over the limit: a file growing after the stat is caught as well.
      const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(s.size + 1, 64 * 1024)));
      let length = 0;
      for (;;) {
        if (length === buffer.length) {
          if (length > maxBytes) return { ok: false, message: tooLarge(length, maxBytes) };
          return { ok: false, message: "the file grew while it was read; it is read again at its next change" };
        }
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      return { ok: true, text: buffer.toString("utf8", 0, length) };
    } finally {
      await handle.close();
    }
  } catch (e) {
    return { ok: false, message: errnoText(e) };
  }
}

const ERRNO_TEXT: Readonly<Record<string, string>> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  ENOTDIR: "not a directory",
  EISDIR: "is a directory",
  ELOOP: "too many symbolic links (a symbolic link loop)",
  ENXIO: "no such device or address (a socket?)",
  EMFILE: "too many open files in this process",
  ENFILE: "too many open files in the system",
};

/** "CODE: what it means" for a Node file-system error, else its message. */
export function errnoText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code === undefined ? err.message : `${err.code}: ${ERRNO_TEXT[err.code] ?? "cannot be read"}`;
}
