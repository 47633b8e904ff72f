// grpc.health.v1 and server reflection on the ADS port, as grpcurl or a Kubernetes gRPC probe sees them.
import { afterEach, expect, test } from "vitest";
import { FileDescriptorProto } from "protobufjs/ext/descriptor/index.js";
import { closeAll, healthCheck, reflect, startIntrospectRig, type IntrospectRig } from "./fixtures.js";

let rig: IntrospectRig | undefined;
afterEach(async () => {
  closeAll();
  await rig?.close();
  rig = undefined;
});

test("health reports SERVING for the server and each service, NOT_SERVING once told", async () => {
  rig = await startIntrospectRig();
  expect(await healthCheck(rig.address)).toBe("SERVING");
  expect(await healthCheck(rig.address, "envoy.service.discovery.v3.AggregatedDiscoveryService")).toBe("SERVING");
  expect(await healthCheck(rig.address, "oooi.debug.v1.DebugService")).toBe("SERVING");
  rig.introspection.setServing(false);
  expect(await healthCheck(rig.address)).toBe("NOT_SERVING");
  await expect(healthCheck(rig.address, "no.such.Service")).rejects.toMatchObject({ code: 5 });
});

test("reflection lists ADS, the per-type services, CSDS, debug and health, and describes them", async () => {
  rig = await startIntrospectRig();
  const list = await reflect(rig.address, { list_services: "" });
  const names = (list["list_services_response"] as { service: { name: string }[] }).service.map((s) => s.name).sort();
  expect(names).toEqual([
    "envoy.service.cluster.v3.ClusterDiscoveryService",
    "envoy.service.discovery.v3.AggregatedDiscoveryService",
    "envoy.service.endpoint.v3.EndpointDiscoveryService",
    "envoy.service.listener.v3.ListenerDiscoveryService",
    "envoy.service.route.v3.RouteDiscoveryService",
    "envoy.service.status.v3.ClientStatusDiscoveryService",
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
    "oooi.debug.v1.DebugService",
  ]);

  const file = await reflect(rig.address, { file_containing_symbol: "oooi.debug.v1.DebugService" });
  const protos = (file["file_descriptor_response"] as { file_descriptor_proto: Buffer[] }).file_descriptor_proto;
  const decoded = protos.map(
    (b) =>
      FileDescriptorProto.decode(b) as unknown as {
        package?: string;
        service?: { name: string; method: { name: string }[] }[];
      },
  );
  const debug = decoded.flatMap((f) => (f.package === "oooi.debug.v1" ? (f.service ?? []) : []));
  expect(debug.map((s) => s.name)).toEqual(["DebugService"]);
  expect(debug[0]?.method.map((m) => m.name)).toEqual([
    "ListNodes",
    "GetNodeConfig",
    "PushHistory",
    "ListFleet",
    "GetVersion",
  ]);

  const csds = await reflect(rig.address, {
    file_containing_symbol: "envoy.service.status.v3.ClientStatusDiscoveryService",
  });
  expect(csds["file_descriptor_response"]).toBeDefined();
});
