// The server's string interner (src/xds/server/intern.ts): one copy of what every stream repeats,
// bounded because the strings come from clients.
import { expect, test } from "vitest";
import { Interner } from "../../../src/xds/server/intern.js";

test("repeats are held once; distinct strings past the bound are passed through, not kept", () => {
  const strings = new Interner(3);
  for (const s of ["envoy", "envoy", "ns/proxy", "envoy", "ns/proxy"]) strings.intern(s);
  expect(strings.size).toBe(2);
  strings.intern("third");
  // A client inventing names cannot grow the table: the fourth distinct one is returned as given.
  const flood = Array.from({ length: 100 }, (_, i) => strings.intern(`garbage-${String(i)}`));
  expect(strings.size).toBe(3);
  expect(flood[42]).toBe("garbage-42");
  expect(strings.intern("envoy")).toBe("envoy");
});
