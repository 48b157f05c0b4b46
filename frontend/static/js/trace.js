// The Trace tab: what the kernel did inside the (simulated) chip during the first call of the first
// case: the pipeline timeline and the blocks every step moved.

import { h } from "./dom.js";
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
  root.replaceChildren(
    h("section", { class: "result-section" }, h("h3", {}, "Timeline"), timelineView(trace, result.estimate)),
    h("section", { class: "result-section" }, h("h3", {}, "Blocks per step"), gridView(trace)),
    trace.note ? h("p", { class: "muted note" }, trace.note) : null,
  );
}

/** One line for the Results tab: how much the trace holds, and a way to it. */
export function traceSummary(trace, onOpen) {
  if (!trace?.available) return null;
  const c = trace.counts || {};
  const lanes = (trace.lanes || []).filter((l) => l.core !== null && l.core !== undefined).length;
  const parts = [`${c.dma_start ?? 0} DMAs`, `${trace.steps.length} steps`, `${lanes || 1} core${lanes > 1 ? "s" : ""}`];
  return h(
    "p",
    { class: "trace-summary", id: "trace-summary" },
    `Inside the kernel (case ${trace.case}): ${parts.join(", ")}. `,
    h("button", { type: "button", class: "link", id: "open-trace", onclick: onOpen }, "Timeline and blocks per step"),
  );
}
