// The Trace tab: what the kernel did inside the (simulated) chip during the first call of the first
// case: the pipeline timeline and the blocks every step moved. Imported when the tab is first shown
// (app.js); the Results tab's one-line summary is tracesummary.js.

import { fill, h } from "./dom.js";
import { seconds } from "./format.js";
import { gridView } from "./gridview.js";
import { timelineView } from "./timeline.js";

const EMPTY = "No trace yet: run a kernel in interpret mode; the first call of its first case is traced.";

/** Fill the Trace tab from a result (or an empty object to clear it). */
export function renderTrace(root, result) {
  const trace = result?.trace;
  if (!trace) {
    const why = result?.status && result.mode === "tpu" ? "Runs on a real TPU are not traced (the trace comes from the interpreter)." : EMPTY;
    root.replaceChildren(h("p", { class: "muted", id: "trace-empty" }, why));
    return;
  }
  if (!trace.available) {
    root.replaceChildren(h("p", { class: "muted", id: "trace-empty" }, `No trace for this run: ${trace.reason}`));
    return;
  }
  fill(root,
    overlapNote(trace),
    h("section", { class: "result-section" }, h("h3", {}, "Timeline"), timelineView(trace, result.estimate)),
    h("section", { class: "result-section" }, h("h3", {}, "Blocks per step"), gridView(trace)),
    trace.note ? h("p", { class: "muted note" }, trace.note) : null,
  );
}

/**
 * Per device that ran SparseCore and TensorCore work: each kind's kernel and host-time span (from
 * the trace's start), and whether the two overlapped in the simulation.
 */
export function coreKindSpans(trace) {
  const t0 = Math.min(...trace.events.map((e) => e.t));
  const devices = new Map();
  for (const e of trace.events) {
    if (!e.core_kind || e.device === null || e.device === undefined) continue;
    const kinds = devices.get(e.device) ?? devices.set(e.device, {}).get(e.device);
    const span = (kinds[e.core_kind] ??= { kernel: "", start: Infinity, end: -Infinity });
    if (e.kind === "kernel_start") span.kernel = e.label || span.kernel;
    else if (e.core !== null && e.core !== undefined) {
      span.start = Math.min(span.start, e.t - t0);
      span.end = Math.max(span.end, e.t - t0 + (e.dur || 0));
    }
  }
  return [...devices.entries()]
    .filter(([, k]) => k.sparse_core && k.tensor_core && Number.isFinite(k.sparse_core.start) && Number.isFinite(k.tensor_core.start))
    .sort(([a], [b]) => a - b)
    .map(([device, k]) => ({
      device,
      sparse: k.sparse_core,
      tensor: k.tensor_core,
      overlapped: k.sparse_core.start < k.tensor_core.end && k.tensor_core.start < k.sparse_core.end,
    }));
}

/** Where the simulator ran one after the other what a TPU runs at the same time, said plainly. */
function overlapNote(trace) {
  const spans = coreKindSpans(trace);
  const serial = spans.filter((d) => !d.overlapped);
  if (!serial.length) return null;
  const [first] = serial;
  const [a, b] = first.sparse.start <= first.tensor.start ? [["SparseCore", first.sparse], ["TensorCore", first.tensor]] : [["TensorCore", first.tensor], ["SparseCore", first.sparse]];
  const span = ([kind, s]) => `the ${kind} kernel${s.kernel ? ` (${s.kernel})` : ""} from ${seconds(s.start)} to ${seconds(s.end)}`;
  const others = serial.length > 1 ? ` The same on the ${serial.length - 1} other device${serial.length > 2 ? "s" : ""}.` : "";
  return h(
    "p",
    { class: "overlap-note", id: "overlap-note", dataset: { serialised: serial.length } },
    h("strong", {}, "Serialised by the simulator: "),
    `on device ${first.device} it ran ${span(a)}, then ${span(b)}: one after the other.${others} `,
    "On a TPU, the SparseCore and the TensorCore run at the same time, so the two kernels overlap. ",
    "The Estimated TPU clock below starts every core together: there they sit side by side.",
  );
}
