// Small SVG/DOM charts. Every mark carries its numbers as data-* attributes, so tests (and curious
// users with dev tools) read values, not pixels.

import { h, s } from "./dom.js";
import { bytes, isNum, num, percent } from "./format.js";

const CELL = 8;

/** Colour of one error-map cell: a tolerance multiple (<= 1 is within tolerance). */
function cellStyle(value) {
  if (typeof value === "string") return { fill: "var(--heat-nan)", opacity: 1 };
  if (!isNum(value) || value <= 0) return { fill: "var(--heat-ok)", opacity: 0.12 };
  if (value <= 1) return { fill: "var(--heat-ok)", opacity: 0.2 + 0.6 * value };
  return { fill: "var(--heat-bad)", opacity: 0.55 + 0.45 * Math.min(Math.log10(value) / 3, 1) };
}

/**
 * A heatmap of a coarse per-block error map: rows of tolerance multiples (1 = at tolerance).
 * @param {Array<Array<number|string>>} map
 * @param {string} label what the map is of, for the accessible name
 */
export function errorMap(map, label) {
  const rows = map.length;
  const cols = Math.max(0, ...map.map((r) => r.length));
  let worst = 0;
  let over = 0;
  const cells = [];
  map.forEach((row, r) =>
    row.forEach((value, c) => {
      const { fill, opacity } = cellStyle(value);
      const bad = typeof value === "string" || (isNum(value) && value > 1);
      if (bad) over += 1;
      if (isNum(value)) worst = Math.max(worst, value);
      else if (typeof value === "string") worst = Infinity;
      cells.push(
        s(
          "rect",
          {
            class: bad ? "cell bad" : "cell",
            x: c * CELL, y: r * CELL, width: CELL, height: CELL,
            style: { fill, "fill-opacity": String(opacity) },
            dataset: { row: r, col: c, value: String(value) },
          },
          s("title", {}, `block (${r}, ${c}): ${num(value)} × tolerance`),
        ),
      );
    }),
  );
  const svg = s(
    "svg",
    {
      class: "heatmap",
      viewBox: `0 0 ${cols * CELL} ${rows * CELL}`,
      width: Math.min(96, Math.max(cols * 12, 24)),
      role: "img",
      "aria-label": `${label}: error map, ${rows}×${cols} blocks, ${over} over tolerance`,
      dataset: { rows, cols, over },
    },
    cells,
  );
  const caption = over
    ? `${over} of ${rows * cols} blocks over tolerance (worst ${num(worst)}×)`
    : `all ${rows * cols} blocks within tolerance (worst ${num(worst)}×)`;
  return h("figure", { class: "error-map" }, svg, h("figcaption", {}, h("span", { class: "map-label" }, label), caption));
}

/** One labelled bar of memory use against a capacity. `used` null: not measured. */
export function memoryBar(kind, label, used, capacity, detail = "") {
  const known = isNum(used);
  const fraction = known && capacity > 0 ? used / capacity : 0;
  const over = fraction > 1;
  const text = known ? `${bytes(used)} of ${bytes(capacity)} (${percent(used, capacity)})` : `not measured (capacity ${bytes(capacity)})`;
  // A visible sliver even for tiny use, so "used, but little" differs from "nothing".
  const width = known && used > 0 ? Math.max(Math.min(fraction, 1) * 100, 0.75) : 0;
  return h(
    "div",
    {
      class: over ? "membar over" : "membar",
      dataset: { kind, ...(known ? { used } : {}), capacity },
    },
    h("div", { class: "membar-head" }, h("span", { class: "membar-label" }, label), h("span", { class: "membar-value" }, text)),
    h(
      "div",
      {
        class: "membar-track",
        role: "meter",
        "aria-label": `${label} use`,
        "aria-valuemin": 0,
        "aria-valuemax": capacity,
        "aria-valuenow": known ? Math.min(used, capacity) : 0,
        "aria-valuetext": text,
      },
      h("div", { class: "membar-fill", style: { width: `${width}%` } }),
    ),
    detail ? h("div", { class: "membar-detail muted" }, detail) : null,
  );
}
