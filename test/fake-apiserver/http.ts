// Raw HTTP helpers for tests that look at the wire (status bodies, watch lines, content types).
import type { FakeApiServer } from "../support/fake-apiserver/index.js";

/** A decoded response. */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
  contentType: string;
}

/** One request with a JSON (or given content type) body. */
export async function call(
  fake: FakeApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
  accept?: string,
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["Content-Type"] = contentType;
  if (accept !== undefined) headers["Accept"] = accept;
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(`${fake.url}${path}`, init);
  const text = await res.text();
  return {
    status: res.status,
    body: (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>,
    contentType: res.headers.get("content-type") ?? "",
  };
}

/** Opens a watch and collects its event lines until closed. */
export function openWatch(
  fake: FakeApiServer,
  pathAndQuery: string,
): { events: { type: string; object: Record<string, unknown> }[]; closed: Promise<void>; abort: () => void } {
  const events: { type: string; object: Record<string, unknown> }[] = [];
  const ctl = new AbortController();
  const closed = (async () => {
    try {
      const res = await fetch(`${fake.url}${pathAndQuery}`, { signal: ctl.signal });
      if (res.body === null) return;
      const decoder = new TextDecoder();
      let buf = "";
      for await (const chunk of res.body) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          events.push(JSON.parse(buf.slice(0, nl)) as { type: string; object: Record<string, unknown> });
          buf = buf.slice(nl + 1);
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    events,
    closed,
    abort: () => {
      ctl.abort();
    },
  };
}
