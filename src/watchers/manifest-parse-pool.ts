// Manifest files parsed off the event loop that answers DNS and xDS: the yaml package parses
// ~1 MB/s, and a file just under --max-manifest-bytes held DNS answers for up to 2 s and took the
// process past 1 GiB (bench/README.md#floods). Long-lived worker threads parse the documents a
// change needs, in chunks, so that the main thread is only busy taking in one chunk's objects at a
// time. There is one worker per core (at most MAX_PARSE_THREADS): a folder read asks for all its
// files at once and each file goes to the worker with the fewest in hand, so a new folder of many
// files parses on every core while the main thread waits (40,000 objects in 81 files took 8 s on
// one worker). A worker is started again when it dies and ended after a large file, its heap with
// it. Small parses stay on the main thread, where one costs less than a round trip, except in a read
// of many files (the first read of a large folder). Run from the TypeScript sources (the tests),
// where no compiled worker script exists, everything is parsed here.
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { stat } from "node:fs/promises";
import { DEFAULT_MAX_MANIFEST_BYTES, readManifestText } from "./manifest-file-read.js";
import {
  assembleManifests,
  documentParse,
  loadManifests,
  NO_LINES,
  parseManifestFile,
  placedFile,
  plannedParse,
  type ManifestFile,
  type ManifestLoad,
  type ParsedFile,
  type ParsedObject,
} from "./manifests.js";
import type { ParseReply, ParseRequest, WireObject } from "./manifest-parse-worker.js";
import { SerialCalls } from "../util/serial-calls.js";

const SCRIPT = new URL("./manifest-parse-worker.js", import.meta.url);
/** Text parsed here rather than in the worker: below it the round trip costs more than the parse. */
const IN_THREAD_BYTES = 16 * 1024;
/** Files in one read from which every file is parsed in the threads, however small (parseManifestFileOffThread's `bulk`). */
export const BULK_READ_FILES = 64;
/** Text per request: the main thread takes in one reply's objects at once. */
const CHUNK_BYTES = 256 * 1024;
/** After a file this large the worker is ended: its heap grew with the parse. */
const RECYCLE_BYTES = 1024 * 1024;

/** Parse threads at most, whatever the cores: each holds a heap of its own while it parses. */
export const MAX_PARSE_THREADS = 4;

/** Objects from the worker have no YAML node: their positions are their `fields`, or their `document`. */
const unwired = (o: WireObject): ParsedObject => ({ ...o, node: undefined, lines: NO_LINES });

type Unnumbered =
  { readonly path: string; readonly documents: readonly string[] } | { readonly path: string; readonly whole: string };
type Pending = (reply: ParseReply | Error) => void;

class ParseWorker {
  #worker: { readonly thread: Worker; readonly pending: Map<number, Pending> } | undefined;
  #next = 0;
  readonly #requests = new SerialCalls();
  /** Files given to this worker and not yet done (parseManifestFileOffThread picks the least busy). */
  files = 0;

  /** The worker's reply; requests run one after another. */
  ask(request: Unnumbered): Promise<ParseReply> {
    return this.#requests.run(() => this.#send(request));
  }

  /** Ends the worker (a new one starts at the next request), releasing its memory. */
  recycle(): void {
    const w = this.#worker;
    this.#worker = undefined;
    if (w !== undefined) void w.thread.terminate();
  }

  #send(request: Unnumbered): Promise<ParseReply> {
    const w = (this.#worker ??= this.#start());
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      w.pending.set(id, (r) => {
        if (r instanceof Error) reject(r);
        else resolve(r);
      });
      w.thread.ref();
      const numbered: ParseRequest = { ...request, id };
      w.thread.postMessage(numbered);
    });
  }

  #start(): { readonly thread: Worker; readonly pending: Map<number, Pending> } {
    const thread = new Worker(SCRIPT);
    const w = { thread, pending: new Map<number, Pending>() };
    const fail = (e: Error): void => {
      if (this.#worker === w) this.#worker = undefined;
      for (const settle of w.pending.values()) settle(e);
      w.pending.clear();
    };
    thread.on("message", (r: ParseReply) => {
      w.pending.get(r.id)?.(r);
      w.pending.delete(r.id);
      if (w.pending.size === 0) w.thread.unref();
    });
    thread.on("error", fail);
    thread.on("exit", (code) => {
      fail(new Error(`the manifest parse worker exited (${String(code)})`));
    });
    // An idle worker never keeps the process alive (unref after the listeners: adding one refs it again).
    thread.unref();
    return w;
  }
}

const available = existsSync(fileURLToPath(SCRIPT));
let pool: readonly ParseWorker[] | undefined;

/** The worker with the fewest files in hand (the pool started on first use, one per core). */
function leastBusy(): ParseWorker {
  pool ??= Array.from({ length: Math.min(MAX_PARSE_THREADS, availableParallelism()) }, () => new ParseWorker());
  let best: ParseWorker | undefined;
  for (const w of pool) if (best === undefined || w.files < best.files) best = w;
  if (best === undefined) throw new Error("unreachable: an empty parse pool");
  return best;
}

/**
 * parseManifestFile, with the parsing of a large change done in a worker thread. `bulk`: the file
 * is one of a read of many (BULK_READ_FILES), so a small one is parsed off the event loop too —
 * one at a time each costs less here, but 18,000 of them kept the event loop parsing for 49 s
 * while the threads idled.
 */
export async function parseManifestFileOffThread(
  file: ManifestFile,
  previous?: ParsedFile,
  bulk = false,
): Promise<ParsedFile> {
  const plan = plannedParse(file, previous);
  const bytes = plan === undefined ? file.text.length : plan.missing.reduce((n, t) => n + t.length, 0);
  if (!available || bytes === 0 || (bytes < IN_THREAD_BYTES && !bulk)) return parseManifestFile(file, previous);
  // One worker for the whole file: its chunks in order, and its heap recycled after a large one.
  const worker = leastBusy();
  worker.files++;
  try {
    if (plan === undefined) return await whole(worker, file);
    for (const chunk of chunks(plan.missing)) {
      const r = await worker.ask({ path: file.path, documents: chunk });
      if (!("documents" in r)) throw new Error("failed" in r ? r.failed : "unexpected reply");
      for (const [i, objects] of r.documents.entries()) {
        // A document that does not parse: the whole file's parse says why.
        if (objects === undefined) return await whole(worker, file);
        plan.parses.set(chunk[i] ?? "", documentParse(objects.map(unwired)));
      }
    }
    return placedFile(file.path, plan);
  } finally {
    worker.files--;
    if (bytes >= RECYCLE_BYTES) worker.recycle();
  }
}

/** loadManifests of one file (a watched --manifests FILE), parsed as parseManifestFileOffThread does. */
export async function loadManifestFileOffThread(path: string, maxBytes: number | undefined): Promise<ManifestLoad> {
  // A folder now (or gone): as loadManifests has it.
  if ((await stat(path).catch(() => undefined))?.isFile() !== true) return loadManifests(path, maxBytes);
  const read = await readManifestText(path, maxBytes ?? DEFAULT_MAX_MANIFEST_BYTES);
  if (!read.ok) return { ok: false, error: { file: path, message: read.message } };
  return assembleManifests([await parseManifestFileOffThread({ path, text: read.text })]);
}

async function whole(worker: ParseWorker, file: ManifestFile): Promise<ParsedFile> {
  const r = await worker.ask({ path: file.path, whole: file.text });
  if (!("whole" in r)) throw new Error("failed" in r ? r.failed : "unexpected reply");
  return { ...r.whole, objects: r.whole.objects.map(unwired) };
}

/** The texts in runs of at most CHUNK_BYTES (or one text, when it alone is larger). */
function* chunks(texts: readonly string[]): Generator<string[]> {
  let chunk: string[] = [];
  let size = 0;
  for (const t of texts) {
    if (chunk.length > 0 && size + t.length > CHUNK_BYTES) {
      yield chunk;
      chunk = [];
      size = 0;
    }
    chunk.push(t);
    size += t.length;
  }
  if (chunk.length > 0) yield chunk;
}
