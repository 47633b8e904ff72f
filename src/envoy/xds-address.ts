// Where Envoys find the xDS server: the default address and its parser, apart from the bootstrap
// renderer so the command line reads them without loading it.

/** Where `oooi serve` listens for ADS by default, so what `oooi render`'s bootstrap points at by default. */
export const DEFAULT_XDS_ADDRESS = "127.0.0.1:18000";

/** Splits "host:port"; undefined when the port is not 1-65535. */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const colon = address.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const portText = address.slice(colon + 1);
  const port = Number(portText);
  if (!/^[0-9]{1,5}$/.test(portText) || port < 1 || port > 65535 || host === "") return undefined;
  return { host, port };
}
