// The one place that loads @peculiar/x509: it resolves its dependencies through tsyringe, which
// needs the Reflect metadata API before the library is imported, and it signs with WebCrypto,
// which Node provides.
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export { x509 };
