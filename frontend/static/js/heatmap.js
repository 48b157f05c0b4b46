// The sweep's heat map: one cell per config, colored by the estimated time (or its share of the
// chip's roofline), with configs that are not candidates marked by why (rejected by the compiler,
// over VMEM, wrong, error). The first parameter runs down, the second across; further parameters
// make one panel per combination of their values. Every cell carries its numbers as data-*.

import { h, s } from "./dom.js";
import { bandText } from "./estimate.js";
import { num, seconds } from "./format.js";

const CELL = 52;
const GAP = 2;
const LABEL_W = 56;
const LABEL_H = 16;
const MARK = { rejected: "✗ lower", over_vmem: "VMEM", wrong: "wrong", error: "error", unestimated: "no est." };

export const paramsText = (params) => Object.entries(params).map(([k, v]) => `${k}=${v}`).join(", ");

/** The value a cell shows: estimated (or measured) seconds, or the roofline fraction; null if none. */
export function cellValue(config, metric) {
  if (config.status !== "ok") return null;
  if (metric === "roofline") return config.roofline_fraction ?? null;
  return config.measured_seconds ?? config.estimated_seconds ?? null;
}

/** 0 (best) .. 1 (worst) for a value among `values`: log scale for times, linear for fractions. */
export function badness(value, values, metric) {
  if (value === null || !values.length) return null;
  if (metric === "roofline") {
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    return hi > lo ? (hi - value) / (hi - lo) : 0;
  }
  const logs = values.map(Math.log);
  const lo = Math.min(...logs);
  const hi = Math.max(...logs);
  return hi > lo ? (Math.log(value) - lo) / (hi - lo) : 0;
}

/** Green (good) through amber to red (bad). */
export const heatColor = (bad) => `hsl(${Math.round(130 - 125 * bad)}, 62%, ${Math.round(40 + 8 * bad)}%)`;

function label(config, metric) {
  const value = cellValue(config, metric);
  if (value === null) return MARK[config.status] || config.status;
  return metric === "roofline" ? `${Math.round(100 * value)}%` : seconds(value).replace(" ", "");
}

function panel(title, rows, cols, cells, metric, values, best) {
  const [rowName, rowValues] = rows;
  const [colName, colValues] = cols;
  const width = LABEL_W + colValues.length * (CELL + GAP);
  const height = LABEL_H + rowValues.length * (CELL + GAP) + 4;
  const marks = [];
  colValues.forEach((v, c) => marks.push(s("text", { class: "hm-col", x: LABEL_W + c * (CELL + GAP) + CELL / 2, y: LABEL_H - 4, "text-anchor": "middle" }, `${colName}=${v}`)));
  rowValues.forEach((v, r) => marks.push(s("text", { class: "hm-row", x: LABEL_W - 4, y: LABEL_H + r * (CELL + GAP) + CELL / 2 + 4, "text-anchor": "end" }, `${rowName}=${v}`)));
  for (const { config, r, c } of cells) {
    const value = cellValue(config, metric);
    const bad = badness(value, values, metric);
    const x = LABEL_W + c * (CELL + GAP);
    const y = LABEL_H + r * (CELL + GAP);
    const classes = `hm-cell ${config.status}${config.index === best ? " best" : ""}`;
    marks.push(
      s("g", { class: "hm-config", dataset: { index: config.index, status: config.status, value: value ?? "", params: paramsText(config.params) } },
        s("rect", { class: classes, x, y, width: CELL, height: CELL, rx: 3, style: bad === null ? null : { fill: heatColor(bad) } }),
        s("text", { class: "hm-text", x: x + CELL / 2, y: y + CELL / 2 + 4, "text-anchor": "middle" }, label(config, metric)),
        s("title", {}, `${paramsText(config.params)}: ${config.status}\n${config.reason}${config.estimate ? `\n${bandText(config.estimate)}` : ""}`)),
    );
  }
  return h(
    "figure",
    { class: "hm-panel" },
    s("svg", { class: "heatmap", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": `Heat map ${title}`.trim() }, marks),
    title ? h("figcaption", { class: "muted" }, title) : null,
  );
}

/**
 * The heat map of a sweep: `spec.params` gives the axes, `configs` the cells (any subset, e.g.
 * while the sweep is live), `metric` "time" or "roofline", `best` the best config's index.
 */
export function heatMap(spec, configs, metric = "time", best = null) {
  const names = Object.keys(spec.params);
  const axes = names.map((n) => [n, spec.params[n]]);
  const rows = axes[0];
  const cols = axes[1] ?? ["", [""]];
  const rest = axes.slice(2);
  const values = configs.map((c) => cellValue(c, metric)).filter((v) => v !== null);
  const panels = new Map();
  for (const config of configs) {
    const key = rest.map(([n]) => `${n}=${config.params[n]}`).join(", ");
    if (!panels.has(key)) panels.set(key, []);
    const r = rows[1].indexOf(config.params[rows[0]]);
    const c = axes[1] ? cols[1].indexOf(config.params[cols[0]]) : 0;
    panels.get(key).push({ config, r, c });
  }
  // Panels in the order of the values as given (not as text: 512 before 4096).
  const rank = (key) => rest.map(([n, values], i) => values.indexOf(panels.get(key)[0].config.params[n]) * 1000 ** (rest.length - i)).reduce((a, b) => a + b, 0);
  const order = [...panels.keys()].sort((a, b) => rank(a) - rank(b));
  const scale = metric === "roofline" ? "share of the roofline (higher is better)" : "estimated time (shorter is better)";
  return h(
    "div",
    { class: "heatmap-wrap", id: "tune-heatmap", dataset: { metric, cells: configs.length, panels: order.length } },
    order.map((key) => panel(key, rows, cols, panels.get(key), metric, values, best)),
    h("p", { class: "muted legend" }, `Color: ${scale}${values.length ? `, from ${metric === "roofline" ? `${num(100 * Math.max(...values))}%` : seconds(Math.min(...values))} (green) to ${metric === "roofline" ? `${num(100 * Math.min(...values))}%` : seconds(Math.max(...values))} (red)` : ""}. Marked cells are not candidates: ✗ lower (the TPU compiler rejects it), VMEM (over the chip's VMEM), wrong, error; hover a cell for why.`),
  );
}
