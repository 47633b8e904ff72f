// What the Envoy renderer produces and the checks read: one proxy's resources per xDS type, and a
// reason a resource set is unfit to push with the resources it is about.
import type { ResourceAt } from "./render/fields.js";

/** The LDS, CDS, EDS and RDS resources of one proxy (proto3 JSON), each list sorted by resource name. */
export interface EnvoyResources {
  listeners: object[];
  clusters: object[];
  endpoints: object[];
  routes: object[];
}

/** One reason a resource set is unfit to push, and the resources it is about (for Problem.field). */
export interface Finding {
  readonly message: string;
  readonly at: ResourceAt;
}
