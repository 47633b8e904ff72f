// The agent's `node.id`: the pod it runs in, so CSDS and `oooi debug nodes` name the replica.
import { hostname } from "node:os";

/** `$POD_NAMESPACE/$POD_NAME` when both are set (the Downward API), else the host name. */
export function defaultNodeId(env: NodeJS.ProcessEnv = process.env): string {
  const ns = env["POD_NAMESPACE"];
  const pod = env["POD_NAME"];
  if (ns !== undefined && ns !== "" && pod !== undefined && pod !== "") return `${ns}/${pod}`;
  return hostname();
}
