// The responder's UDP buffers (src/dns/server/responder.ts): 4 MiB asked, so a burst of 500
// queries is not dropped by the kernel before the event loop reads it (bench/README.md, DNS);
// a kernel cap (net.core.rmem_max/wmem_max) is said at start, not discovered as lost queries.
import { createSocket } from "node:dgram";
import { expect, test } from "vitest";
import { bufferShortfall, UDP_BUFFER_BYTES } from "../../../src/dns/server/responder.js";

test("Linux's default cap (208 KB, reported doubled) is named with the sysctls that lift it", () => {
  const message = bufferShortfall(2 * 212_992, 2 * 212_992);
  expect(message).toContain("212992/212992 bytes, not 4194304");
  expect(message).toContain("net.core.rmem_max");
});

test("a cap on one direction alone is reported too", () => {
  expect(bufferShortfall(2 * UDP_BUFFER_BYTES, 2 * 65_536)).toContain(`${String(UDP_BUFFER_BYTES)}/65536`);
});

test("the whole size granted (the kernel reports it doubled) says nothing", () => {
  expect(bufferShortfall(2 * UDP_BUFFER_BYTES, 2 * UDP_BUFFER_BYTES)).toBeUndefined();
});

test("on this host, a real socket's granted size is judged the same way", async () => {
  const udp = createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  try {
    udp.setRecvBufferSize(UDP_BUFFER_BYTES);
    udp.setSendBufferSize(UDP_BUFFER_BYTES);
    const granted = [udp.getRecvBufferSize(), udp.getSendBufferSize()] as const;
    const full = granted.every((b) => b / 2 >= UDP_BUFFER_BYTES);
    expect(bufferShortfall(...granted) === undefined).toBe(full);
  } finally {
    udp.close();
  }
});
