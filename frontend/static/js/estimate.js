// The TPU time model on the page (sandbox/harness/model): the Results section that says how long the
// kernel would take on the chosen TPU and why, and the trace timeline's estimated-TPU clock. Both
// read the run's `estimate` (an Estimate, sandbox/protocol/estimate.py), so the timeline, the
// roofline figure and a sweep (tune.js) agree: they are the same numbers.

import { h } from "./dom.js";
import { bytes, count, flops as fmtFlops, num, seconds } from "./format.js";

const BOUND_TEXT = { memory: "memory-bound", compute: "compute-bound", step_overhead: "step-overhead-bound" };

export const boundText = (bound) => BOUND_TEXT[bound] || bound || "";

/** Shares of the estimate spent on compute, memory and fixed costs, for a stacked bar. */
export function split(estimate) {
  const total = estimate.compute_seconds + estimate.memory_seconds + estimate.overhead_seconds || 1;
  return [
    ["compute", estimate.compute_seconds / total],
    ["memory", estimate.memory_seconds / total],
    ["step_overhead", estimate.overhead_seconds / total],
  ];
}

function splitBar(estimate) {
  return h(
    "div",
    { class: "est-split", id: "estimate-split", role: "img", "aria-label": "Where the estimated time goes" },
    split(estimate).map(([part, share]) =>
      h("span", { class: `est-part ${part}`, style: { width: `${(100 * share).toFixed(1)}%` }, dataset: { part, share: share.toFixed(4) }, title: `${boundText(part)}: ${num(100 * share)}%` }),
    ),
  );
}

function classRow(c) {
  return h(
    "tr",
    { dataset: { count: c.count, bound: c.bound, seconds: c.seconds } },
    h("td", { class: "num mono" }, count(c.count)),
    h("td", {}, `${c.kernel}: ${c.example}`),
    h("td", { class: "num mono" }, bytes(c.copy_in_bytes)),
    h("td", { class: "num mono" }, bytes(c.copy_out_bytes)),
    h("td", { class: "num mono" }, fmtFlops(c.mxu_flops)),
    h("td", { class: "num mono" }, seconds(c.compute_seconds)),
    h("td", { class: "num mono" }, seconds(c.copy_seconds)),
    h("td", { class: "num mono" }, seconds(c.seconds)),
    h("td", {}, boundText(c.bound)),
  );
}

/** How far to trust an estimate, in words: the real-chip range its validation band allows (when its
 * kernels' family has published timings on this chip) and the band itself, or "not validated for …". */
export function bandText(estimate) {
  if (!estimate?.validation) return "";
  const range = estimate.low_seconds != null && estimate.high_seconds != null ? `real chip ${seconds(estimate.low_seconds)}–${seconds(estimate.high_seconds)}; ` : "";
  return estimate.validation.startsWith("not validated") ? estimate.validation : `${range}${estimate.family}: ${estimate.validation}`;
}

/** The Results section for `result.estimate`, or null when the run has none. */
export function estimateSection(estimate, chipTitle) {
  if (!estimate) return null;
  const head = ["Steps", "Like", "Copied in", "Written back", "MXU", "Compute", "Copies", "Per step", "Bound"];
  return h(
    "section",
    { id: "estimate-section", class: "result-section", dataset: { seconds: estimate.seconds, bound: estimate.bound, fraction: estimate.roofline_fraction } },
    h("h3", {}, `Estimated on a ${chipTitle || estimate.chip}`),
    h(
      "p",
      { id: "estimate-facts" },
      h("strong", {}, seconds(estimate.seconds)),
      `, ${boundText(estimate.bound)}, ${num(100 * estimate.roofline_fraction)}% of the roofline (${seconds(estimate.roofline_seconds)}): `,
      `${fmtFlops(estimate.flops)}, ${bytes(estimate.hbm_bytes)} copied (${bytes(estimate.min_hbm_bytes)} distinct). `,
      "From the traced kernel, not from running it; the TPU time model's assumptions are below.",
    ),
    estimate.validation ? h("p", { id: "estimate-band", dataset: { low: estimate.low_seconds ?? "", high: estimate.high_seconds ?? "" } }, bandText(estimate)) : null,
    estimate.outside_seconds ? h("p", { id: "estimate-outside", dataset: { seconds: estimate.outside_seconds, bytes: estimate.outside_bytes } }, `Includes ${seconds(estimate.outside_seconds)} of XLA ops outside the kernels (${bytes(estimate.outside_bytes)} moved: transposes, casts, reductions around them, at HBM bandwidth).`) : null,
    estimate.xla_seconds > 0 ? h("p", { id: "estimate-baseline", dataset: { seconds: estimate.xla_seconds } }, `XLA's own op (the reference, plain jnp) estimated on this chip: ${seconds(estimate.xla_seconds)}; the kernel ${num(estimate.seconds / estimate.xla_seconds)}× its time.${estimate.xla_validation ? ` (${estimate.xla_validation})` : ""}`) : null,
    estimate.host_dispatch_seconds ? h("p", { id: "estimate-host" }, `Device time only: timed from the host, each call also pays ~${seconds(estimate.host_dispatch_seconds)} of host dispatch.`) : null,
    splitBar(estimate),
    estimate.classes?.length
      ? h("div", { class: "table-wrap" }, h("table", { class: "data", id: "estimate-steps" }, h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, estimate.classes.map(classRow))))
      : null,
    estimate.notes?.length ? h("ul", { class: "est-notes", id: "estimate-notes" }, estimate.notes.map((n) => h("li", {}, n))) : null,
    h("details", { class: "why" }, h("summary", {}, "How the model estimates"), h("ul", {}, (estimate.assumptions || []).map((a) => h("li", {}, a)))),
  );
}

function byLane(items, lane) {
  const lanes = new Map();
  for (const item of items) {
    const key = lane(item);
    if (!lanes.has(key)) lanes.set(key, []);
    lanes.get(key).push(item);
  }
  return lanes;
}

/**
 * The model's step for each trace step: by grid point for a pallas_call grid, else the i-th step
 * of a core in each. Null when the two disagree (another kernel, or a capped trace).
 */
export function matchSteps(traceSteps, rows) {
  const byPoint = new Map(rows.filter((r) => r.grid_point).map((r) => [`${r.kernel}|${r.grid_point.join(",")}`, r]));
  const perCore = byLane(rows.filter((r) => !r.grid_point), (r) => r.core);
  const seen = new Map();
  const found = traceSteps.map((st) => {
    if (st.kind === "grid" && st.grid_point) return byPoint.get(`${st.kernel}|${st.grid_point.join(",")}`) ?? null;
    const core = st.core ?? 0;
    const i = seen.get(core) ?? 0;
    seen.set(core, i + 1);
    return perCore.get(core)?.[i] ?? null;
  });
  return found.every(Boolean) && found.length ? found : null;
}

/**
 * The estimated-TPU clock from the model: each step where the model puts it; a step's copies queue
 * on its lane's DMA engine from the step's start, each lasting bytes / HBM bandwidth; semaphore
 * ticks at their step's start. Null when the estimate cannot be matched to the trace.
 */
export function modelClock(trace, dmas, estimate) {
  const rows = estimate?.timeline;
  if (!rows?.length || estimate.timeline_truncated) return null;
  const matched = matchSteps(trace.steps, rows);
  if (!matched) return null;
  const bandwidth = trace.hbm_bandwidth || 1;
  const stepStart = (index) => (index === null || index === undefined ? matched[0].start : matched[index]?.start ?? matched[0].start);
  const engine = new Map();
  const spans = dmas.map(({ start, wait }) => {
    const lane = `${start.device ?? "-"}/${start.core ?? "-"}`;
    const begin = Math.max(stepStart(start.step), engine.get(lane) ?? 0);
    const end = begin + (start.bytes || 0) / bandwidth;
    engine.set(lane, end);
    return { start: begin, end, waited: Boolean(wait) };
  });
  const steps = matched.map((r) => ({ start: r.start, end: r.start + r.seconds }));
  const ticks = trace.events.filter((e) => e.kind === "sem_signal" || e.kind === "sem_wait").map((e) => ({ e, at: stepStart(e.step) }));
  return { spans, steps, ticks, unit: "tpu" };
}

/** What the estimated-TPU clock shows, for the note under the timeline. */
export function modelNote(trace, estimate) {
  return `Estimated TPU time from the TPU time model (the same numbers as the Results' estimate and Tune): each step lasts its fixed cost plus the larger of its compute and the copies that overlap it; each copy lasts bytes ÷ ${num(trace.hbm_bandwidth / 1e9)} GB/s (the chip's HBM bandwidth per TensorCore), queued on its core's DMA engine from its step's start. The whole kernel: ${seconds(estimate.seconds)}, ${boundText(estimate.bound)}.`;
}
