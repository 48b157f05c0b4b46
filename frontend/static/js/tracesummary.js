// The Results tab's line about the kernel trace (the Trace tab itself, trace.js, loads on first use).

import { h } from "./dom.js";

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

