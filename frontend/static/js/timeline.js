// The pipeline timeline: what the kernel did on each simulated core, as an SVG Gantt chart. One lane
// per (device, core); in each, the grid / pipeline steps as bands, the DMAs as bars from start to the
// wait that completed them (stacked when they overlap), and ticks for semaphore signals and waits.
// Two clocks: host time (what the CPU simulation took: honest, but not TPU time) and an estimated
// TPU view: the TPU time model's steps (estimate.js) when the run has an estimate that matches the
// trace, else one in which every DMA lasts bytes / HBM bandwidth and nothing else takes time.
// Every mark carries its numbers as data-* attributes.

import { h, s } from "./dom.js";
import { modelClock, modelNote } from "./estimate.js";
import { bytes, count, num, seconds } from "./format.js";

const W = 600;
const LABEL = 64;
const STEP_H = 12;
const DMA_H = 9;
const MAX_DMA_ROWS = 5;
const TICK_H = 10;
const LANE_GAP = 10;

const laneKey = (e) => `${e.device ?? "-"}/${e.core ?? "-"}`;
const laneName = (lane, devices) =>
  lane.core === null || lane.core === undefined
    ? `device ${lane.device ?? 0}`
    : devices > 1 ? `dev ${lane.device} · core ${lane.core}` : `core ${lane.core}`;

/** DMAs of a trace: each start with the wait that completed it (the first wait naming its id). */
export function pairDmas(events) {
  const waits = new Map();
  for (const e of events) {
    if (e.kind !== "dma_wait") continue;
    for (const id of e.dma || []) if (!waits.has(id)) waits.set(id, e);
  }
  return events
    .filter((e) => e.kind === "dma_start")
    .map((start) => ({ start, wait: waits.get((start.dma || [])[0]) ?? null }));
}

function dmaClass(start) {
  if (start.dst_device !== null && start.dst_device !== undefined && start.dst_device !== start.device) return "remote";
  if (start.dst_core !== null && start.dst_core !== undefined && start.dst_core !== start.core) return "remote";
  if (/^(in|out)/.test(start.src || "")) return "read";
  if (/^(in|out)/.test(start.dst || "")) return "write";
  return "local";
}

/** Host-time spans: each DMA from its start to the end of its wait; steps as recorded. */
function hostClock(trace, dmas) {
  const spans = dmas.map(({ start, wait }) => ({
    start: start.t,
    end: wait ? wait.t + (wait.dur || 0) : start.t + (start.dur || 0),
    waited: Boolean(wait),
  }));
  const steps = trace.steps.map((st) => ({ start: st.t, end: st.t_end }));
  const ticks = trace.events.filter((e) => e.kind === "sem_signal" || e.kind === "sem_wait").map((e) => ({ e, at: e.t }));
  return { spans, steps, ticks, unit: "host" };
}

/**
 * The estimated TPU clock, per lane: walk the lane's events in order; a DMA started at the lane's
 * clock takes bytes / bandwidth; a wait moves the clock to the end of the DMAs it waits for;
 * everything else is free. Cross-core and cross-device dependencies are not modelled.
 */
function tpuClock(trace, dmas) {
  const bandwidth = trace.hbm_bandwidth || 1;
  const clock = new Map();
  const ends = new Map();
  const at = new Map(); // event -> estimated time
  for (const e of [...trace.events].sort((a, b) => a.t - b.t)) {
    const key = laneKey(e);
    let now = clock.get(key) ?? 0;
    if (e.kind === "dma_start") {
      const id = (e.dma || [])[0];
      ends.set(id, now + (e.bytes || 0) / bandwidth);
    } else if (e.kind === "dma_wait") {
      for (const id of e.dma || []) now = Math.max(now, ends.get(id) ?? now);
    }
    clock.set(key, now);
    at.set(e, now);
  }
  const spans = dmas.map(({ start, wait }) => {
    const begin = at.get(start) ?? 0;
    return { start: begin, end: begin + (start.bytes || 0) / bandwidth, waited: Boolean(wait) };
  });
  // A step spans the estimated times of the events inside its host-time interval, on its lane.
  const steps = trace.steps.map((st) => {
    const inside = trace.events.filter((e) => laneKey(e) === laneKey(st) && e.t >= st.t && e.t <= st.t_end && at.has(e));
    const times = inside.map((e) => at.get(e));
    const dmaEnds = inside.filter((e) => e.kind === "dma_start").map((e) => ends.get((e.dma || [])[0]) ?? 0);
    return times.length ? { start: Math.min(...times), end: Math.max(...times, ...dmaEnds) } : { start: 0, end: 0 };
  });
  const ticks = trace.events.filter((e) => e.kind === "sem_signal" || e.kind === "sem_wait").map((e) => ({ e, at: at.get(e) ?? 0 }));
  return { spans, steps, ticks, unit: "tpu" };
}

/** Greedy interval rows: the first row whose last bar ended before this one starts. */
function stack(spans) {
  const rowEnds = [];
  return spans.map((span) => {
    let row = rowEnds.findIndex((end) => end <= span.start);
    if (row < 0) row = rowEnds.length;
    rowEnds[row] = span.end;
    return Math.min(row, MAX_DMA_ROWS - 1);
  });
}

function describe(start, wait, span, unit) {
  const lines = [
    `DMA ${(start.dma || []).join(",")}: ${start.src || "?"}${start.src_region || ""} → ${start.dst || "?"}${start.dst_region || ""}`,
    `${bytes(start.bytes)}${start.phase ? ` · ${start.phase}` : ""}${start.step !== null && start.step !== undefined ? ` · step ${start.step}` : ""}`,
    `${unit === "host" ? "host" : "estimated TPU"} ${seconds(span.start)} → ${seconds(span.end)} (${seconds(span.end - span.start)})`,
  ];
  if (start.dst_device !== null && start.dst_device !== undefined && start.dst_device !== start.device) lines.push(`to device ${start.dst_device}`);
  if (!wait) lines.push("never waited for in the trace");
  return lines.join("\n");
}

function axis(t0, t1, x, y) {
  const marks = [];
  const span = t1 - t0 || 1;
  const step = 10 ** Math.floor(Math.log10(span / 4));
  const nice = [1, 2, 5].map((m) => m * step).find((v) => span / v <= 8) ?? step * 10;
  for (let t = Math.ceil(t0 / nice) * nice; t <= t1 + 1e-12; t += nice) {
    marks.push(s("line", { class: "tl-grid", x1: x(t), x2: x(t), y1: 0, y2: y }));
    marks.push(s("text", { class: "tl-tick", x: x(t), y: y + 11, "text-anchor": "middle" }, seconds(t - t0)));
  }
  return marks;
}

/** Draw `trace` with one of the two clocks ("host" or "tpu"; "tpu" from the model's `estimate` if it matches). */
export function timelineSvg(trace, unit = "host", estimate = null) {
  const dmas = pairDmas(trace.events);
  const model = unit === "tpu" ? modelClock(trace, dmas, estimate) : null;
  const clock = model ?? (unit === "tpu" ? tpuClock(trace, dmas) : hostClock(trace, dmas));
  const lanes = trace.lanes.filter((l) => l.core !== null && l.core !== undefined);
  const shown = lanes.length ? lanes : trace.lanes;
  const devices = new Set(shown.map((l) => l.device)).size;
  const times = [...clock.spans.flatMap((sp) => [sp.start, sp.end]), ...clock.steps.flatMap((st) => [st.start, st.end]), ...clock.ticks.map((tk) => tk.at)];
  const t0 = times.length ? Math.min(...times) : 0;
  const t1 = times.length ? Math.max(...times) : 1;
  const x = (t) => LABEL + ((t - t0) / (t1 - t0 || 1)) * (W - LABEL - 8);
  const laneHeight = STEP_H + MAX_DMA_ROWS * (DMA_H + 1) + TICK_H + LANE_GAP;
  const laneIndex = new Map(shown.map((l, i) => [laneKey(l), i]));
  const top = (e) => (laneIndex.get(laneKey(e)) ?? 0) * laneHeight;
  // Overlapping DMAs stack in rows, lane by lane.
  const rows = new Array(dmas.length).fill(0);
  const perLaneRows = new Map();
  dmas.forEach(({ start }, i) => {
    const key = laneKey(start);
    if (!perLaneRows.has(key)) perLaneRows.set(key, []);
    perLaneRows.get(key).push(i);
  });
  for (const indices of perLaneRows.values()) {
    const laneRows = stack(indices.map((i) => clock.spans[i]));
    indices.forEach((i, k) => (rows[i] = laneRows[k]));
  }
  const height = shown.length * laneHeight;
  const body = [];
  shown.forEach((lane, i) => {
    body.push(
      s("g", { class: "tl-lane", dataset: { device: lane.device ?? "", core: lane.core ?? "" } },
        s("text", { class: "tl-label", x: 4, y: i * laneHeight + STEP_H + 12 }, laneName(lane, devices)),
        s("line", { class: "tl-sep", x1: 0, x2: W, y1: (i + 1) * laneHeight - LANE_GAP / 2, y2: (i + 1) * laneHeight - LANE_GAP / 2 })),
    );
  });
  trace.steps.forEach((st, i) => {
    const span = clock.steps[i];
    body.push(
      s("rect", {
        class: `tl-step ${st.number % 2 ? "odd" : "even"}`,
        x: x(span.start), y: top(st), width: Math.max(x(span.end) - x(span.start), 1), height: STEP_H,
        dataset: { step: st.index, number: st.number, kind: st.kind, pipeline: st.pipeline ?? "", core: st.core ?? "", device: st.device ?? "" },
      },
      s("title", {}, `${st.kind === "grid" ? `grid point (${(st.grid_point || []).join(", ")})` : `pipeline ${st.pipeline} step ${st.number}`} · ${st.kernel}\n${seconds(span.start - t0)} → ${seconds(span.end - t0)}`)),
    );
  });
  dmas.forEach(({ start, wait }, i) => {
    const span = clock.spans[i];
    const y = top(start) + STEP_H + 2 + rows[i] * (DMA_H + 1);
    body.push(
      s("rect", {
        class: `tl-dma ${dmaClass(start)}${span.waited ? "" : " unwaited"}`,
        x: x(span.start), y, width: Math.max(x(span.end) - x(span.start), 1.5), height: DMA_H,
        dataset: { dma: (start.dma || []).join(","), bytes: start.bytes ?? "", src: start.src || "", dst: start.dst || "", start: span.start, end: span.end, step: start.step ?? "", core: start.core ?? "", device: start.device ?? "" },
      },
      s("title", {}, describe(start, wait, { start: span.start - t0, end: span.end - t0 }, unit))),
    );
  });
  for (const { e, at } of clock.ticks) {
    const y = top(e) + STEP_H + 2 + MAX_DMA_ROWS * (DMA_H + 1);
    body.push(
      s("line", { class: `tl-mark ${e.kind}`, x1: x(at), x2: x(at), y1: y, y2: y + TICK_H - 2, dataset: { kind: e.kind, semaphore: e.semaphore ?? "", value: e.value ?? "" } },
        s("title", {}, `${e.kind === "sem_signal" ? "signal" : "wait"} semaphore ${e.semaphore ?? "?"}${e.value !== null && e.value !== undefined ? ` (${e.value})` : ""}${e.dst_core !== null && e.dst_core !== undefined ? ` → core ${e.dst_core}` : ""}`)),
    );
  }
  return s(
    "svg",
    { class: "timeline", viewBox: `0 0 ${W} ${height + 16}`, role: "img", "aria-label": `Timeline: ${dmas.length} DMAs and ${trace.steps.length} steps on ${shown.length} lanes (${unit === "host" ? "host time" : "estimated TPU time"})`, dataset: { unit, clock: model ? "model" : unit, lanes: shown.length, dmas: dmas.length, steps: trace.steps.length, span: t1 - t0 } },
    axis(t0, t1, x, height),
    body,
  );
}

/** The timeline block of the Trace tab: clock switch, the chart, legend, counts and caveats. */
export function timelineView(trace, estimate = null) {
  const holder = h("div", { class: "timeline-wrap", id: "timeline" });
  const note = h("p", { class: "muted note", id: "timeline-note" });
  const draw = (unit) => {
    const svg = timelineSvg(trace, unit, estimate);
    holder.replaceChildren(svg);
    for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.unit === unit));
    note.textContent = unit === "host"
      ? "Host time of the CPU simulation (TPU interpret mode): each interpreter step costs milliseconds here, so lengths say where the simulator spent time, not how long a TPU would take. In on_wait DMA mode a DMA's data moves inside its wait."
      : svg.dataset.clock === "model" ? modelNote(trace, estimate) : `Estimated TPU time: every DMA lasts bytes ÷ ${num(trace.hbm_bandwidth / 1e9)} GB/s (the chip's HBM bandwidth per TensorCore) and everything else is free, so compute, latency and cross-core waits are not modelled. It shows which copies overlap and how long the data movement alone takes.`;
  };
  const buttons = [
    h("button", { type: "button", dataset: { unit: "host" }, onclick: () => draw("host") }, "Host time (simulation)"),
    h("button", { type: "button", dataset: { unit: "tpu" }, onclick: () => draw("tpu") }, "Estimated TPU"),
  ];
  const counts = Object.entries(trace.counts || {}).sort(([a], [b]) => a.localeCompare(b));
  const view = h(
    "div",
    { class: "timeline-view" },
    h("div", { class: "segmented tl-units", role: "group", "aria-label": "Clock" }, buttons),
    holder,
    h("p", { class: "legend muted" },
      h("span", { class: "swatch tl-read" }), " HBM→VMEM ", h("span", { class: "swatch tl-write" }), " VMEM→HBM ",
      h("span", { class: "swatch tl-remote" }), " remote ", h("span", { class: "swatch tl-local" }), " on chip ",
      h("span", { class: "swatch tl-stepband" }), " grid / pipeline step · ticks: semaphore signal (up) and wait"),
    note,
    h("p", { class: "muted", id: "trace-counts" }, `Recorded on case ${trace.case}: `, counts.map(([k, v]) => `${count(v)} ${k.replaceAll("_", " ")}`).join(", "), "."),
    trace.truncated ? h("p", { class: "truncated", id: "trace-truncated" }, `Truncated: only the first ${count(trace.events.length)} events are drawn; the counts cover everything.`) : null,
  );
  draw("host");
  return view;
}
