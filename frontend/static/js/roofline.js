// The roofline: how fast could this kernel be on each TPU generation? The kernel's flops and HBM
// bytes (from the reference's cost analysis, or declared by the entry) against each chip's peak
// bf16 rate and HBM bandwidth (per TensorCore, from /api/chips). A log-log chart with one roof per
// chip and the kernel's arithmetic intensity, plus a table of lower-bound times side by side.

import { h, s } from "./dom.js";
import { bandText } from "./estimate.js";
import { flops as fmtFlops, bytes, isNum, num, seconds } from "./format.js";

const W = 420;
const H = 210;
const PAD = { left: 46, right: 10, top: 10, bottom: 30 };
const X_RANGE = [-2, 4]; // log10 FLOP/byte
const Y_RANGE = [10, 16]; // log10 FLOP/s

/** Lower bound on run time on one TensorCore of `chip`: compute at peak, or bytes at full bandwidth. */
export function lowerBound(chip, flop, byte) {
  const compute = flop / chip.bf16_flops;
  const memory = byte / chip.hbm_bandwidth;
  return { seconds: Math.max(compute, memory), bound: compute >= memory ? "compute" : "memory" };
}

const xOf = (intensity) => PAD.left + ((Math.log10(intensity) - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0])) * (W - PAD.left - PAD.right);
const yOf = (rate) => H - PAD.bottom - ((Math.log10(rate) - Y_RANGE[0]) / (Y_RANGE[1] - Y_RANGE[0])) * (H - PAD.top - PAD.bottom);
const clampX = (intensity) => Math.min(Math.max(intensity, 10 ** X_RANGE[0]), 10 ** X_RANGE[1]);

function roof(chip, selected) {
  const ridge = chip.bf16_flops / chip.hbm_bandwidth;
  const start = 10 ** X_RANGE[0];
  const end = 10 ** X_RANGE[1];
  const points = [[start, chip.hbm_bandwidth * start], [ridge, chip.bf16_flops], [end, chip.bf16_flops]]
    .map(([x, y]) => `${xOf(x).toFixed(1)},${yOf(y).toFixed(1)}`)
    .join(" ");
  return s(
    "polyline",
    {
      class: selected ? "roof selected" : "roof",
      points,
      dataset: { chip: chip.name, peak: chip.bf16_flops, bandwidth: chip.hbm_bandwidth, ridge: ridge.toFixed(1) },
    },
    s("title", {}, `${chip.title}: ${num(chip.bf16_flops / 1e12)} TFLOP/s bf16, ${num(chip.hbm_bandwidth / 1e12)} TB/s HBM, ridge at ${num(ridge)} FLOP/byte`),
  );
}

function axes() {
  const marks = [];
  for (let e = X_RANGE[0]; e <= X_RANGE[1]; e += 1) {
    const x = xOf(10 ** e);
    marks.push(s("line", { class: "grid", x1: x, x2: x, y1: PAD.top, y2: H - PAD.bottom }));
    marks.push(s("text", { class: "tick", x, y: H - PAD.bottom + 13, "text-anchor": "middle" }, `1e${e}`));
  }
  for (let e = Y_RANGE[0]; e <= Y_RANGE[1]; e += 2) {
    const y = yOf(10 ** e);
    marks.push(s("line", { class: "grid", x1: PAD.left, x2: W - PAD.right, y1: y, y2: y }));
    marks.push(s("text", { class: "tick", x: PAD.left - 4, y: y + 3, "text-anchor": "end" }, `1e${e}`));
  }
  marks.push(s("text", { class: "axis-label", x: (W + PAD.left) / 2, y: H - 2, "text-anchor": "middle" }, "arithmetic intensity (FLOP / HBM byte)"));
  marks.push(s("text", { class: "axis-label", x: 10, y: PAD.top + 4, transform: `rotate(90 10 ${PAD.top + 4})` }, "FLOP/s"));
  return marks;
}

/** The TPU time model's estimate as a point: the kernel's FLOP/s if it took `estimate.seconds`. */
function estimatePoint(estimate, flop, intensity) {
  if (!estimate?.seconds) return null;
  const rate = flop / estimate.seconds;
  return s("circle", { class: "estimate-point", cx: xOf(clampX(intensity)), cy: yOf(Math.min(Math.max(rate, 10 ** Y_RANGE[0]), 10 ** Y_RANGE[1])), r: 4, dataset: { rate, seconds: estimate.seconds } },
    s("title", {}, `estimated by the TPU time model: ${seconds(estimate.seconds)}, ${fmtFlops(rate)}/s\n${bandText(estimate)}`));
}

function chart(chips, chosen, intensity, point = null) {
  const x = xOf(clampX(intensity));
  return s(
    "svg",
    { class: "roofline-chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Roofline of ${chips.length} chips; the kernel's intensity is ${num(intensity)} FLOP/byte`, dataset: { intensity } },
    axes(),
    chips.map((c) => roof(c, c.name === chosen)),
    s("line", { class: "kernel-intensity", x1: x, x2: x, y1: PAD.top, y2: H - PAD.bottom, dataset: { intensity } }, s("title", {}, `this kernel: ${num(intensity)} FLOP/byte`)),
    point,
  );
}

function row(chip, chosen, flop, byte, measured) {
  const { seconds: bound, bound: kind } = lowerBound(chip, flop, byte);
  const cells = [
    h("td", {}, chip.title),
    h("td", { class: "num mono" }, `${num(chip.bf16_flops / 1e12)} T`),
    h("td", { class: "num mono" }, `${num(chip.hbm_bandwidth / 1e12)} TB/s`),
    h("td", { class: "num mono" }, num(chip.bf16_flops / chip.hbm_bandwidth)),
    h("td", {}, `${kind}-bound`),
    h("td", { class: "num mono" }, seconds(bound)),
  ];
  if (measured) cells.push(h("td", { class: "num mono" }, chip.name === chosen ? `${num((100 * bound) / measured)}%` : "—"));
  return h("tr", { class: chip.name === chosen ? "chosen" : null, dataset: { chip: chip.name, seconds: bound, bound: kind } }, cells);
}

/** The roofline section of a result, or null when the run has no flop/byte counts. */
export function rooflineSection(timing, chips, chosen, estimate = null) {
  const flop = timing?.flops;
  const byte = timing?.bytes_accessed;
  if (!isNum(flop) || !isNum(byte) || flop <= 0 || byte <= 0 || !chips?.length) return null;
  const intensity = flop / byte;
  // On a real TPU the measured median can be set against the bound; a CPU simulation's time cannot.
  const measured = !timing.simulated && isNum(timing.kernel?.median) ? timing.kernel.median : null;
  const head = ["Chip", "Peak bf16 FLOP/s", "HBM", "Ridge (FLOP/B)", "Bound", "Lower bound"];
  if (measured) head.push("Roofline / measured");
  return h(
    "section",
    { id: "roofline-section", class: "result-section" },
    h("h3", {}, "Roofline"),
    h(
      "p",
      { id: "roofline-facts", dataset: { flops: flop, bytes: byte } },
      `${fmtFlops(flop)} and ${bytes(byte)} of HBM traffic (${timing.case ? `case ${timing.case}, ` : ""}from the reference's cost analysis or the entry): `,
      h("strong", {}, `${num(intensity)} FLOP/byte`),
      ".",
    ),
    chart(chips, chosen, intensity, estimatePoint(estimate, flop, intensity)),
    h(
      "div",
      { class: "table-wrap" },
      h("table", { class: "data", id: "roofline" }, h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, chips.map((c) => row(c, chosen, flop, byte, measured)))),
    ),
    h(
      "p",
      { class: "muted note" },
      "Per TensorCore, at the bf16 peak (f32 matmuls run at a fraction of it); a kernel split over several cores divides the bound by their number. ",
      measured ? "Roofline / measured: how close the measured median comes to the bound." : "In the simulator only the bound is meaningful: CPU wall times say nothing about the TPU.",
      estimate ? ` The dot is the TPU time model's estimate (${seconds(estimate.seconds)} on the chosen chip), as in Estimated and Tune; ${bandText(estimate)}.` : "",
    ),
  );
}
