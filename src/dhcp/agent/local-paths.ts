// Paths that belong to the Kea container rather than to the DHCPServer: where the lease volume
// is mounted and where the image keeps its hook libraries. The control plane renders the image's
// defaults; an agent next to a Kea laid out differently rewrites them before applying.

/** Paths of the local Kea that replace the rendered ones (unset: keep what was rendered). */
export interface LocalKeaPaths {
  /** memfile lease file (`lease-database.name`). */
  readonly leaseFile?: string;
  /** Directory of the hook libraries; each `hooks-libraries[].library` keeps its file name. */
  readonly hooksDirectory?: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The Dhcp4 object with the local paths put in; the input is not modified. */
export function withLocalPaths(
  dhcp4: Readonly<Record<string, unknown>>,
  paths: LocalKeaPaths,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...dhcp4 };
  const db = out["lease-database"];
  if (paths.leaseFile !== undefined && isRecord(db)) out["lease-database"] = { ...db, name: paths.leaseFile };
  const hooks = out["hooks-libraries"];
  if (paths.hooksDirectory !== undefined && Array.isArray(hooks)) {
    const dir = paths.hooksDirectory.replace(/\/+$/, "");
    out["hooks-libraries"] = hooks.map((h: unknown) => {
      if (!isRecord(h) || typeof h["library"] !== "string") return h;
      const file = h["library"].slice(h["library"].lastIndexOf("/") + 1);
      return { ...h, library: `${dir}/${file}` };
    });
  }
  return out;
}
