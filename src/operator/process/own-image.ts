// The operator's own image, read from its Pod (POD_NAMESPACE/POD_NAME, the downward API): the
// downward API cannot give a container's image, so the operator asks the API server once at start.
// OOOI_IMAGE, when set, overrides it and no Pod is read. Outside a Pod, or when the Pod cannot be
// read (no `get pods` in the operator's namespace, a POD_NAME that names no Pod), the default image
// stays and a warning says why.
import { statusCode, type KubeRest } from "../../kube/rest.js";
import { ownImage, SETTINGS_ENV, type PodContainers } from "../desired/settings.js";
import type { ApiRetry } from "./api-retry.js";

/** What readOwnImage needs. */
export interface OwnImageOptions {
  readonly rest: KubeRest;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Retries while the API server is away; an HTTP refusal is final. */
  readonly retry: ApiRetry;
  readonly log: { warn(msg: string): void };
}

/** The image of the Pod's operator container, or undefined (OOOI_IMAGE set, not in a Pod, not readable). */
export async function readOwnImage(o: OwnImageOptions): Promise<string | undefined> {
  const set = (k: string) => (o.env[k]?.trim() ?? "") !== "";
  if (set(SETTINGS_ENV.oooi)) return undefined;
  const namespace = o.env["POD_NAMESPACE"]?.trim() ?? "";
  const name = o.env["POD_NAME"]?.trim() ?? "";
  if (namespace === "" || name === "") return undefined;
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
  try {
    const pod = await o.retry.until(
      "own Pod",
      () => o.rest.request<PodContainers>({ method: "GET", path }),
      (e) => statusCode(e) !== undefined,
    );
    const image = ownImage(pod);
    if (image === undefined) o.log.warn(`Pod ${namespace}/${name} names no image for its operator container`);
    return image;
  } catch (e) {
    if (statusCode(e) === undefined) throw e; // aborted at start-up
    o.log.warn(
      `cannot read the operator's own Pod ${namespace}/${name} (${(e as Error).message}); ` +
        `the dhcp-agent sidecars run the default image unless ${SETTINGS_ENV.oooi} is set`,
    );
    return undefined;
  }
}
