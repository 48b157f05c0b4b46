// The grid / BlockSpec view: for each HBM operand, which block every grid or pipeline step read and
// wrote (and on which core), drawn over the operand's shape. Step through it with the slider or
// the arrow buttons; blocks of the current step light up (read: blue, write: orange), earlier ones
// keep a count, and a block moved again (an accumulator written back twice, a tile fetched again
// for the next column) is outlined as a revisit. Every block carries its numbers as data-*.

import { h, s } from "./dom.js";

const BOX = 150; // the longer side of an operand's drawing, in px

/** "[0:128, 128:256]" or "[1, 0:8, 0:128]" -> [[start, end], ...] per dimension. */
export function parseRegion(text, shape) {
  const parts = String(text || "").replace(/^\[|\]$/g, "").split(",").map((p) => p.trim()).filter(Boolean);
  if (!parts.length || parts[0] === "...") return shape.map((n) => [0, n]);
  return parts.map((part, i) => {
    const m = /^(-?\d+)?:(-?\d+)?$/.exec(part);
    if (m) return [Number(m[1] ?? 0), Number(m[2] ?? shape[i] ?? 1)];
    const at = Number(part);
    return [at, at + 1];
  });
}

/** An operand drawn as a 2-D rectangle: its last two dimensions (a vector is one row). */
function plane(shape) {
  if (shape.length >= 2) return { rows: shape[shape.length - 2], cols: shape[shape.length - 1] };
  return { rows: 1, cols: shape[0] ?? 1 };
}

function rect2d(region, shape) {
  const dims = parseRegion(region, shape);
  const last = dims.slice(-2);
  if (shape.length < 2) return { r0: 0, r1: 1, c0: last[0][0], c1: last[0][1] };
  return { r0: last[0][0], r1: last[0][1], c0: last[1][0], c1: last[1][1] };
}

function stepLabel(step) {
  if (!step) return "";
  const where = step.core !== null && step.core !== undefined ? ` · core ${step.core}` : "";
  const device = step.device ? ` · device ${step.device}` : "";
  if (step.kind === "grid") return `grid point (${(step.grid_point || []).join(", ")})${where}${device} · ${step.kernel}`;
  return `pipeline ${step.pipeline} step ${step.number}${where}${device} · ${step.kernel}`;
}

function operandFigure(operand) {
  const { rows, cols } = plane(operand.shape);
  const scale = BOX / Math.max(rows, cols);
  const width = Math.max(cols * scale, 6);
  const height = Math.max(rows * scale, 6);
  const regions = new Map();
  for (const visit of operand.visits) {
    if (!regions.has(visit.region)) regions.set(visit.region, { region: visit.region, block: visit.block, visits: [] });
    regions.get(visit.region).visits.push(visit);
  }
  const blocks = [...regions.values()].map((r) => {
    const { r0, r1, c0, c1 } = rect2d(r.region, operand.shape);
    const el = s("rect", {
      class: "gv-block",
      x: c0 * scale, y: r0 * scale, width: Math.max((c1 - c0) * scale, 1), height: Math.max((r1 - r0) * scale, 1),
      dataset: { region: r.region, block: r.block ? r.block.join(",") : "", reads: r.visits.filter((v) => v.access === "read").length, writes: r.visits.filter((v) => v.access === "write").length },
    });
    const title = s("title", {});
    el.append(title);
    return { ...r, el, title, cx: ((c0 + c1) / 2) * scale, cy: ((r0 + r1) / 2) * scale };
  });
  const labels = blocks.map((b) => s("text", { class: "gv-count", x: b.cx, y: b.cy + 3, "text-anchor": "middle" }));
  const svg = s(
    "svg",
    { class: "gv-operand", viewBox: `-1 -1 ${width + 2} ${height + 2}`, width: width + 2, height: height + 2, role: "img", "aria-label": `${operand.name}: ${operand.shape.join("×")} ${operand.dtype}, ${blocks.length} blocks moved`, dataset: { name: operand.name, kernel: operand.kernel, device: operand.device } },
    s("rect", { class: "gv-array", x: 0, y: 0, width, height }),
    blocks.map((b) => b.el),
    labels,
  );
  const caption = h(
    "figcaption",
    {},
    h("strong", {}, operand.name),
    operand.param ? ` (${operand.param})` : "",
    ` · ${operand.role} · ${operand.shape.join("×")} ${operand.dtype}`,
    h("br"),
    h("span", { class: "muted" }, `${operand.visits.length} moves, ${operand.revisits} revisit${operand.revisits === 1 ? "" : "s"}${operand.launch ? ` · launch ${operand.launch + 1}` : ""}${operand.device ? ` · device ${operand.device}` : ""}`),
  );
  /** Show the state after step `at`: this step's blocks lit, earlier ones counted. */
  const show = (at) => {
    blocks.forEach((b, i) => {
      const done = b.visits.filter((v) => v.step !== null && v.step <= at);
      const now = b.visits.filter((v) => v.step === at);
      const reads = done.filter((v) => v.access === "read").length;
      const writes = done.filter((v) => v.access === "write").length;
      const state = now.some((v) => v.access === "write") ? "write" : now.length ? "read" : done.length ? "seen" : "";
      b.el.setAttribute("class", `gv-block ${state}${reads > 1 || writes > 1 ? " revisited" : ""}`);
      b.el.dataset.now = now.map((v) => v.access).join(",");
      b.el.dataset.readsSoFar = reads;
      b.el.dataset.writesSoFar = writes;
      b.title.textContent = `${operand.name}${b.region}${b.block ? ` block (${b.block.join(", ")})` : ""}: read ${reads}×, written ${writes}× so far` +
        (now.length ? ` · this step: ${now.map((v) => `${v.access} on core ${v.core ?? 0}`).join(", ")}` : "");
      labels[i].textContent = reads + writes > 1 ? String(reads + writes) : "";
    });
  };
  return { figure: h("figure", { class: "gv-figure" }, svg, caption), show };
}

/** The grid view block of the Trace tab, or a note when the run moved no HBM blocks. */
export function gridView(trace) {
  const grid = trace.grid;
  const operands = (grid?.operands || []).filter((o) => o.visits?.length);
  if (!operands.length) return h("p", { class: "muted", id: "grid-view-empty" }, grid?.note || "This kernel moved no HBM blocks that the trace could see.");
  const steps = trace.steps;
  const figures = operands.map(operandFigure);
  const slider = h("input", { type: "range", id: "gv-step", min: 0, max: Math.max(steps.length - 1, 0), value: 0, "aria-label": "Step" });
  const label = h("span", { id: "gv-label", "aria-live": "polite" });
  const go = (at) => {
    const step = Math.max(0, Math.min(steps.length - 1, at));
    slider.value = String(step);
    label.textContent = steps.length ? `Step ${step + 1} of ${steps.length}: ${stepLabel(steps[step])}` : "No steps recorded";
    label.dataset.step = String(step);
    for (const f of figures) f.show(step);
  };
  slider.addEventListener("input", () => go(Number(slider.value)));
  const view = h(
    "div",
    { class: "grid-view", id: "grid-view" },
    h("div", { class: "gv-controls" },
      h("button", { type: "button", id: "gv-prev", "aria-label": "Previous step", onclick: () => go(Number(slider.value) - 1) }, "◀"),
      slider,
      h("button", { type: "button", id: "gv-next", "aria-label": "Next step", onclick: () => go(Number(slider.value) + 1) }, "▶"),
      label),
    h("div", { class: "gv-operands" }, figures.map((f) => f.figure)),
    h("p", { class: "legend muted" }, h("span", { class: "swatch gv-read" }), " read this step ", h("span", { class: "swatch gv-write" }), " written this step ",
      h("span", { class: "swatch gv-seen" }), " moved earlier (number: moves so far) ", h("span", { class: "swatch gv-revisit" }), " revisited"),
    grid.note ? h("p", { class: "muted note" }, grid.note) : null,
  );
  go(0);
  return view;
}
