// Write refusals (HTTP 403) of one reconcile pass → the RoleBindings a platform engineer still has
// to create (src/operator/desired/permissions.ts NAMESPACE_ROLES), per namespace, with the command
// that creates each. The operator cannot bind roles itself; it reports and retries. Pure.
import { MANAGED_KINDS } from "../desired/objects.js";
import { bindingCommand, namespaceRoleFor, type NamespaceRole } from "../desired/permissions.js";

/** A namespace where a write needs `role` bound and the API server refused it. */
export interface MissingBinding {
  readonly namespace: string;
  readonly role: NamespaceRole;
  /** The kubectl command that creates the binding. */
  readonly command: string;
}

/** The namespace role that grants writing the object `name` of `kind`, if it is granted per namespace at all. */
export function roleOfObject(kind: string, name: string): NamespaceRole | undefined {
  const k = MANAGED_KINDS.find((m) => m.kind === kind);
  if (k === undefined) return undefined;
  const slash = k.apiVersion.indexOf("/");
  return namespaceRoleFor(slash < 0 ? "" : k.apiVersion.slice(0, slash), k.plural, "patch", name);
}

/** Collected during one pass: once a namespace refused a role's write, its other writes wait for the binding. */
export class MissingBindings {
  readonly #operatorNamespace: string;
  readonly #missing = new Map<string, MissingBinding>();

  constructor(operatorNamespace: string) {
    this.#operatorNamespace = operatorNamespace;
  }

  /** True when a write needing the same role as `kind`/`name` in `namespace` was already refused this pass. */
  blocked(kind: string, name: string, namespace: string | undefined): boolean {
    const role = roleOfObject(kind, name);
    return role !== undefined && namespace !== undefined && this.#missing.has(`${role.clusterRole}/${namespace}`);
  }

  /** Notes a 403 on a write of `kind`/`name` in `namespace`; false when no namespace role grants that write. */
  refused(kind: string, name: string, namespace: string | undefined): boolean {
    const role = roleOfObject(kind, name);
    if (role === undefined || namespace === undefined) return false;
    this.#missing.set(`${role.clusterRole}/${namespace}`, {
      namespace,
      role,
      command: bindingCommand(role, namespace, this.#operatorNamespace),
    });
    return true;
  }

  /** Sorted by role, then namespace. */
  list(): MissingBinding[] {
    return [...this.#missing.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, m]) => m);
  }
}
