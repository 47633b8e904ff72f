// The DNS files the operator's rendering continues from (withRenderedDns): the observed ConfigMaps'
// data, and the last rendering's own for a DNS child whose ConfigMap is not observed — so a pending
// ConfigMap does not make renderAll render its Infra again on every watch event.
import { describe, expect, it } from "vitest";
import { withRenderedDns } from "../../src/operator/run.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra, NS } from "../support/fixtures.js";

describe("withRenderedDns", () => {
  const state = combine(
    { infras: [infra("vlan100")] },
    { attachments: [attachment("hc1")] },
    hostedCluster("hc1", 1, []),
  );
  const first = renderAll(state, { previous: new Map() });
  const dir = `${NS}/vlan100-dns/`;
  const rendered = Object.entries(first.infras[0]?.coreDns ?? {});

  it("adds the last rendering's files of a DNS child with no observed ConfigMap; renderAll then keeps its rendering", () => {
    expect(rendered.length).toBeGreaterThan(1);
    const previous = withRenderedDns(new Map(), first);
    expect([...previous]).toEqual(rendered.map(([k, text]) => [dir + k, text]));
    const second = renderAll(state, { previous, reuse: first });
    expect(second.infras[0]).toBe(first.infras[0]);
    // Without them the Infra is rendered again (same content, new objects).
    const again = renderAll(state, { previous: new Map(), reuse: first });
    expect(again.infras[0]).not.toBe(first.infras[0]);
    expect(again.infras[0]?.coreDns).toEqual(first.infras[0]?.coreDns);
  });

  it("an observed ConfigMap's data wins (the same map back), and no rendering adds nothing", () => {
    const observed = new Map(rendered.map(([k]) => [dir + k, "as observed"]));
    expect(withRenderedDns(observed, first)).toBe(observed);
    const none = new Map<string, string>();
    expect(withRenderedDns(none, undefined)).toBe(none);
  });
});
