// StatusEvents → core v1 Events on the object they are about, as `kubectl describe` and `kubectl get
// events` read them. A repeated Event (same object, type, reason and message) is the same Event
// object with its count incremented and lastTimestamp moved, as client-go's EventCorrelator does
// (kubernetes.io/docs/reference/kubernetes-api/cluster-resources/event-v1/): its name is a hash of
// those fields, so the deduplication survives a restart or a change of leader. Events are best
// effort: a failed one is logged and counted, never fails the pass.
import { createHash } from "node:crypto";
import { CoreV1Api, PatchStrategy, setHeaderOptions, type CoreV1Event } from "@kubernetes/client-node";
import type { Clock } from "../../util/clock.js";
import { statusCode, type KubeRest } from "../../kube/rest.js";
import type { StatusEvent } from "../status/conditions.js";
import type { OperatorMetrics } from "../process/metrics.js";
import type { Logger } from "../../util/logger.js";

/** The object an Event is about. */
export interface InvolvedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string | undefined;
}

/** `source.component` of every Event the operator records. */
export const EVENT_SOURCE = "oooi-operator";

/** The Event's name: the object's name and a digest of what makes two Events the same. */
export function eventName(involved: InvolvedObject, e: StatusEvent): string {
  const digest = createHash("sha256")
    .update(JSON.stringify([involved.kind, involved.name, involved.uid ?? "", e.type, e.reason, e.message]))
    .digest("hex")
    .slice(0, 16);
  return `${involved.name.slice(0, 253 - 17)}.${digest}`;
}

/** The core v1 Event recorded the first time. */
export function eventBody(involved: InvolvedObject, e: StatusEvent, now: number): CoreV1Event {
  // metav1.Time: whole seconds.
  const at = new Date(Math.floor(now / 1000) * 1000);
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: eventName(involved, e), namespace: involved.namespace },
    involvedObject: {
      apiVersion: involved.apiVersion,
      kind: involved.kind,
      namespace: involved.namespace,
      name: involved.name,
      ...(involved.uid === undefined ? {} : { uid: involved.uid }),
    },
    type: e.type,
    reason: e.reason,
    // core v1 does not bound it, events.k8s.io/v1's note is at most 1 kB: keep to the stricter.
    message: e.message.length > 1024 ? `${e.message.slice(0, 1023)}…` : e.message,
    count: 1,
    firstTimestamp: at,
    lastTimestamp: at,
    source: { component: EVENT_SOURCE },
  };
}

/** Options of EventRecorder. */
export interface EventRecorderOptions {
  readonly rest: KubeRest;
  readonly clock: Clock;
  readonly logger: Pick<Logger, "debug" | "info" | "warn">;
  readonly metrics: OperatorMetrics;
}

/** Records Events: create, or on a name conflict increment the existing one's count. */
export class EventRecorder {
  readonly #o: EventRecorderOptions;
  readonly #events: CoreV1Api;

  constructor(options: EventRecorderOptions) {
    this.#o = options;
    this.#events = options.rest.api(CoreV1Api);
  }

  async record(involved: InvolvedObject, e: StatusEvent): Promise<void> {
    const body = eventBody(involved, e, this.#o.clock.now());
    const name = eventName(involved, e);
    const namespace = involved.namespace;
    try {
      try {
        await this.#events.createNamespacedEvent({ namespace, body });
      } catch (err) {
        if (statusCode(err) !== 409) throw err;
        const live = await this.#events.readNamespacedEvent({ name, namespace });
        await this.#events.patchNamespacedEvent(
          { name, namespace, body: { count: (live.count ?? 1) + 1, lastTimestamp: body.lastTimestamp } },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        );
      }
      this.#o.metrics.inc("oooi_writes_total", { op: "event", kind: involved.kind });
    } catch (err) {
      this.#o.metrics.inc("oooi_write_errors_total", { op: "event", kind: involved.kind });
      this.#o.logger.warn(
        { kind: involved.kind, namespace: involved.namespace, name: involved.name, reason: e.reason, err: String(err) },
        "could not record an Event",
      );
    }
  }
}
