// The per-case part of a result: each case's verdict per output, where the outputs differ from the
// reference (first mismatching indices, got / expected), data races, and per-block error maps.

import { errorMap } from "./charts.js";
import { h, section } from "./dom.js";
import { count, isNum, num, percent, shape } from "./format.js";
import { USER_FILE } from "./marks.js";

function tolerance(t) {
  return t ? `${num(t.rtol)} / ${num(t.atol)}` : "—";
}

function mismatches(o) {
  if (!isNum(o.mismatch_count) || o.mismatch_count === 0) return count(o.mismatch_count);
  return `${count(o.mismatch_count)} (${percent(o.mismatch_count, o.total)})`;
}

function verdict(passed, why = "") {
  if (passed === true) return h("span", { class: "verdict", dataset: { passed: "true" } }, "pass");
  if (passed === false) return h("span", { class: "verdict", dataset: { passed: "false" } }, why ? `fail (${why})` : "fail");
  return h("span", { class: "verdict", dataset: { passed: "none" } }, "—");
}

/** A row's verdict: its output's, but a case that failed for another reason (a race) fails every row. */
function rowPassed(c, o) {
  if (!o) return c.passed;
  return o.passed === false || c.passed === false ? false : o.passed;
}

export function casesSection(cases) {
  const rows = [];
  cases.forEach((c, index) => {
    const outputs = c.outputs?.length ? c.outputs : [null];
    outputs.forEach((o) => {
      rows.push(
        h(
          "tr",
          { dataset: { case: index, output: o?.name ?? "", passed: String(rowPassed(c, o) ?? "none") } },
          h("td", {}, verdict(rowPassed(c, o), o?.passed !== false && c.races?.length ? "race" : "")),
          h("td", { class: "case-name" }, c.name || `case ${index + 1}`, outputs.length > 1 && o ? h("span", { class: "muted" }, ` · ${o.name}`) : null),
          h("td", { class: "mono" }, `${shape(o?.shape ?? c.input_shapes?.[0])} ${o?.dtype || c.dtype || ""}`),
          h("td", { class: "num mono" }, o ? num(o.max_abs_error) : "—"),
          // An output may have its own tolerance (a scratch file's TOLERANCE per output or dtype).
          h("td", { class: "mono tol" }, tolerance(o?.tolerance ?? c.tolerance)),
          h(
            "td",
            { class: "num mono", title: o ? `${count(o.mismatch_count)} of ${count(o.total)} elements` : null },
            o ? mismatches(o) : "—",
            o?.nonfinite_where ? h("div", { class: "muted nonfinite" }, o.nonfinite_where) : null,
          ),
        ),
      );
    });
  });
  const notes = cases.filter((c) => c.note).map((c) => h("p", { class: "muted" }, `${c.name}: ${c.note}`));
  return section(
    "cases-section",
    "Cases",
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { id: "cases", class: "data" },
        h("thead", {}, h("tr", {}, ["Result", "Case", "Output", "Max abs err", "rtol / atol", "Mismatches"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows),
      ),
    ),
    notes,
  );
}

function mismatchDetails(c, o) {
  const problems = [];
  if (shape(o.shape) !== shape(o.expected_shape)) problems.push(`shape ${shape(o.shape)}, expected ${shape(o.expected_shape)}`);
  if (o.dtype !== o.expected_dtype && o.expected_dtype) problems.push(`dtype ${o.dtype}, expected ${o.expected_dtype}`);
  if (o.nan_parity === false) problems.push("NaN where the reference has none (or the reverse)");
  if (o.inf_parity === false) problems.push("infinities do not match the reference");
  if (o.note) problems.push(o.note);
  const first = o.first_mismatches || [];
  const table = first.length
    ? h(
        "table",
        { class: "data mismatches" },
        h("thead", {}, h("tr", {}, ["Index", "Got", "Expected"].map((t) => h("th", { scope: "col" }, t)))),
        h(
          "tbody",
          {},
          first.map((m) =>
            h(
              "tr",
              { class: "mismatch", dataset: { index: JSON.stringify(m.index) } },
              h("td", { class: "mono" }, `[${(m.index || []).join(", ")}]`),
              h("td", { class: "num mono" }, num(m.got, 6)),
              h("td", { class: "num mono" }, num(m.expected, 6)),
            ),
          ),
        ),
      )
    : null;
  return h(
    "div",
    { class: "mismatch-detail", dataset: { case: c.name, output: o.name } },
    h("h4", {}, `${c.name} · ${o.name}: `, h("span", { class: "bad-text" }, `${count(o.mismatch_count)} of ${count(o.total)} elements differ`)),
    problems.length ? h("ul", { class: "problems" }, problems.map((p) => h("li", {}, p))) : null,
    first.length ? h("p", { class: "muted" }, `First ${first.length} mismatches:`) : null,
    table,
  );
}

export function mismatchSection(cases) {
  const failed = [];
  for (const c of cases) for (const o of c.outputs || []) if (o.passed === false) failed.push(mismatchDetails(c, o));
  return failed.length ? section("mismatch-section", "Mismatches", h("div", { class: "mismatch-grid" }, failed)) : null;
}

function access(a, onGoToLine) {
  const where = a.file === USER_FILE && a.line ? h("button", { type: "button", class: "link goto-line", dataset: { line: a.line }, onclick: () => onGoToLine(a.line) }, `line ${a.line}`) : null;
  return h("li", { class: "race-access", dataset: { kind: a.kind } }, `${a.kind} of ${a.buffer} ${a.region} by ${a.by}`, a.function ? ` in ${a.function}` : "", where ? " at " : "", where);
}

export function racesSection(cases, onGoToLine) {
  const items = [];
  for (const c of cases) {
    for (const race of c.races || []) {
      items.push(
        h(
          "div",
          { class: "race", dataset: { case: c.name } },
          h("h4", {}, `${c.name}: `, h("span", { class: "bad-text" }, race.summary || "data race")),
          h("ul", { class: "problems" }, (race.accesses || []).map((a) => access(a, onGoToLine))),
          race.text ? h("details", {}, h("summary", {}, "The race detector's report"), h("pre", { class: "output" }, race.text)) : null,
        ),
      );
    }
  }
  return items.length ? section("races-section", "Data races", items) : null;
}

export function errorMapsSection(cases) {
  const maps = [];
  for (const c of cases) {
    for (const o of c.outputs || []) {
      if (Array.isArray(o.error_map) && o.error_map.length) maps.push(errorMap(o.error_map, `${c.name} · ${o.name}`));
    }
  }
  if (!maps.length) return null;
  return section(
    "maps-section",
    "Error maps",
    h("p", { class: "muted legend" }, "Per block: the worst element's error as a multiple of its tolerance. ",
      h("span", { class: "swatch ok" }), " within · ", h("span", { class: "swatch bad" }), " over · ", h("span", { class: "swatch nan" }), " NaN/Inf"),
    h("div", { class: "maps" }, maps),
  );
}
