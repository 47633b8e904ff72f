// runOperator's options → the views status is written from: the fleet's replica reports and the
// data plane they add up to (with an xDS server), and the DNS probe through each DNSServer's Service.
import type { KubeRest } from "../../kube/rest.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { NO_DATA_PLANE, type DataPlaneView } from "../status/dataplane.js";
import { DnsServingProbe, dnsServingView, type DnsServingView } from "../status/dns-serving.js";
import { FleetReports } from "../status/fleet.js";
import { XdsDataPlane } from "../status/xds-dataplane.js";
import type { ApiOutage } from "./api-outage.js";
import type { RunOperatorOptions } from "./options.js";

export interface StatusViews {
  readonly fleet: FleetReports | undefined;
  readonly dataPlane: DataPlaneView;
  readonly dnsProbe: DnsServingProbe | undefined;
  readonly dnsServing: DnsServingView | undefined;
}

export function statusViews(
  opts: RunOperatorOptions,
  c: {
    readonly rest: KubeRest;
    readonly identity: string;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly outage: ApiOutage;
  },
): StatusViews {
  const fleet =
    opts.xds === undefined
      ? undefined
      : new FleetReports({
          rest: c.rest,
          namespace: opts.settings.namespace,
          replica: c.identity,
          status: opts.xds.status,
          clock: c.clock,
          fieldManager: opts.settings.fieldManager,
          ...(opts.fleetTiming === undefined ? {} : { timing: opts.fleetTiming }),
          ...(opts.watch?.timeoutSeconds === undefined ? {} : { watchTimeoutSeconds: opts.watch.timeoutSeconds }),
          logger: c.logger,
          unreachable: (what, e) => c.outage.unreachable(what, e),
        });
  const dataPlane =
    fleet !== undefined && opts.xds !== undefined
      ? new XdsDataPlane(fleet, opts.xds.cache)
      : (opts.dataPlane ?? NO_DATA_PLANE);
  const probeOptions = opts.dnsProbe === false ? undefined : (opts.dnsProbe ?? {});
  const dnsProbe =
    probeOptions === undefined
      ? undefined
      : new DnsServingProbe({
          clock: c.clock,
          ...(probeOptions.intervalMs === undefined ? {} : { intervalMs: probeOptions.intervalMs }),
        });
  const dnsServing = dnsProbe === undefined ? undefined : dnsServingView(dnsProbe, probeOptions?.target);
  return { fleet, dataPlane, dnsProbe, dnsServing };
}
