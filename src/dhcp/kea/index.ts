// Public surface of the Kea control-socket side: client, typed errors, applier, model sync.
export { KeaControlClient } from "./client.js";
export type { KeaAnswer, KeaClientOptions, KeaCommander } from "./client.js";
export {
  KEA_RESULT,
  KeaCommandError,
  KeaEmptyError,
  KeaError,
  KeaResultError,
  KeaTimeoutError,
  KeaTransportError,
  KeaUnreachableError,
  KeaUnsupportedError,
  isTransient,
} from "./errors.js";
export { DEFAULT_BACKOFF, backoffDelay, realTimers } from "../../util/backoff.js";
export type { BackoffOptions, Timers } from "../../util/backoff.js";
export { canonicalJson, configHash } from "./canonical.js";
export { addressCapacity, countActiveLeases } from "./leases.js";
export type { LeaseCounts } from "./leases.js";
export { bootstrapKeaConfig } from "./bootstrap.js";
export type { KeaBootstrapOptions } from "./bootstrap.js";
export { KeaSync, selectDhcpModel } from "./sync.js";
export type { KeaSyncOptions } from "./sync.js";
export { KeaApplier, overlay } from "../applier.js";
export type { ApplierEvent, ApplyResult, KeaApplierOptions, KeaConfig, Pinned } from "../applier.js";
