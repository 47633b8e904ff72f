// Public surface of the Kea renderer: DhcpModel → kea-dhcp4.json.
export {
  DEFAULT_CONTROL_SOCKET,
  DEFAULT_HOOKS_DIRECTORY,
  DEFAULT_LEASE_FILE,
  LEASE_CMDS_LIBRARY,
  LFC_INTERVAL_SECONDS,
  SUBNET_ID,
  T1_PERCENT,
  T2_PERCENT,
  renderKea,
} from "./kea-dhcp4.js";
export type { KeaRenderOptions } from "./kea-dhcp4.js";
export type { KeaDhcp4Config, KeaLogger, KeaOptionData, KeaPool, KeaReservation, KeaSubnet4 } from "./kea-types.js";
