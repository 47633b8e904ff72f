// serve's probes: live until it closes; ready once the manifests rendered (the first readable load)
// and every listener is bound, and only while the manifest folder is watched (changes are not seen
// otherwise).
import type { ServeProbes } from "./http.js";

/** What /healthz and /readyz answer from; serve sets the fields as its parts come up. */
export class ServeReadiness implements ServeProbes {
  rendered = false;
  bound = false;
  closing = false;
  /** Why the manifest folder is not watched right now, or undefined. */
  watchDown: string | undefined;

  live(): boolean {
    return !this.closing;
  }

  notReady(): string | undefined {
    if (!this.bound) return "listeners starting";
    if (!this.rendered) return "manifests not rendered yet";
    if (this.watchDown !== undefined)
      return `manifest folder not watched (${this.watchDown}): changes are not seen until the watch is back`;
    return undefined;
  }
}
