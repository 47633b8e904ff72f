// The few DNS bytes the flood bench needs: an A query for a name, and the id of a reply.
// RFC 1035 §4.1 (header, question); §4.2.2 (TCP: a two-byte length before each message).

/** An A/IN query for `name` with id `id`, recursion desired. */
export function aQuery(id: number, name: string): Buffer {
  const labels = name.split(".").map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const header = Buffer.from([(id >> 8) & 0xff, id & 0xff, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

/** The same query framed for TCP. */
export function tcpFramed(query: Buffer): Buffer {
  return Buffer.concat([Buffer.from([query.length >> 8, query.length & 0xff]), query]);
}

/** The name every legitimate query asks: the example's API server, answered from the embedded zone. */
export const LEGIT_NAME = "api.alpha.clusters.example.com";
