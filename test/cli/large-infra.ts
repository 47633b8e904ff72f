// One Infra of many attachments, as YAML: the load of the "render never blocks answering" tests.
import { stringify } from "yaml";
import { formatIPv4 } from "../../src/model/ipv4.js";
import { attachment, infra, machine, namespace, nodePool, NS, service } from "../support/fixtures.js";

/** One Infra "large" on 10.128.0.0/18 with `count` attachments, each with its namespace, 4 Services, NodePool and a worker. */
export function largeInfra(count: number): string {
  const ip = (offset: number): string => formatIPv4((10 << 24) + (128 << 16) + offset);
  const objects: object[] = [
    infra("large", {
      networkConfig: { cidr: `${ip(0)}/18`, gateway: ip(1), networkAttachmentDefinition: "large" },
      infraComponents: {
        dhcp: { serverIP: ip(2), rangeStart: ip(16384 - 256), rangeEnd: ip(16384 - 2) },
        dns: { serverIP: ip(3) },
        proxy: { serverIP: ip(4), internalProxyService: "10.96.0.44" },
      },
    }),
  ];
  for (let c = 0; c < count; c += 1) {
    const name = `large-${String(c).padStart(4, "0")}`;
    const cp = `${NS}-${name}`;
    const svc = (k: number): string => formatIPv4((((172 << 24) | (20 << 16)) + c * 4 + k) >>> 0);
    objects.push(
      attachment(name, { infra: "large", baseDomain: "large.example.com" }),
      namespace(cp),
      service(cp, "kube-apiserver", svc(0), [6443]),
      service(cp, "oauth-openshift", svc(1), [6443]),
      service(cp, "ignition-server-proxy", svc(2), [443]),
      service(cp, "konnectivity-server", svc(3), [8091]),
      nodePool(name),
      machine(cp, `${name}-worker-0`, `${name}-workers`, [ip(256 + c)]),
    );
  }
  return objects.map((o) => stringify(o)).join("---\n");
}
