// Mode `both` on a TPU server (RunResult.both, sandbox/backends/both.py): the simulator's verdict
// beside the chip's, how far apart the two runs' outputs are, and the time model's estimate beside
// the chip's measured time. Every string from a run is text, never markup.

import { h, section } from "./dom.js";
import { count, isNum, num, seconds } from "./format.js";
import { STATUS_TEXT } from "./vocab.js";

function verdict(status, summary) {
  return h("span", {}, h("span", { class: "badge", dataset: { status } }, STATUS_TEXT[status] || status), " ", summary);
}

function timeLine(both) {
  if (!isNum(both.measured_seconds) && !isNum(both.estimated_seconds)) return null;
  const measured = isNum(both.measured_seconds) ? seconds(both.measured_seconds) : "not timed";
  const estimated = isNum(both.estimated_seconds) ? seconds(both.estimated_seconds) : "none";
  const ratio =
    isNum(both.measured_seconds) && isNum(both.estimated_seconds) && both.measured_seconds > 0
      ? ` (estimate / measured ${(both.estimated_seconds / both.measured_seconds).toFixed(2)})`
      : "";
  return `measured on the chip ${measured}; the model's estimate ${estimated}${ratio}`;
}

function casesTable(cases) {
  const rows = cases.flatMap((c) =>
    (c.outputs || []).map((o) =>
      h(
        "tr",
        {},
        h("td", {}, c.name),
        h("td", { class: "mono" }, o.name),
        h("td", { class: "mono" }, isNum(o.max_abs_error) ? num(o.max_abs_error) : "—"),
        h("td", { class: "mono" }, `${count(o.mismatch_count)} of ${count(o.total)}`),
      ),
    ),
  );
  if (!rows.length) return null;
  return h(
    "table",
    { class: "data", id: "both-cases" },
    h("thead", {}, h("tr", {}, ...["Case", "Output", "Largest difference", "Outside the run's tolerance"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, rows),
  );
}

/** The section, or null for a run that was not in mode `both`. */
export function sideBySideSection(both) {
  if (!both) return null;
  const rows = [
    ["On the chip", verdict(both.chip_status, both.chip_summary)],
    ["Simulated", verdict(both.simulated_status, both.simulated_summary)],
    ["Outputs", both.largest || "no case reached both runs"],
    ["Time", timeLine(both)],
  ].filter(([, v]) => v);
  return section(
    "both-section",
    "Chip and simulator",
    h(
      "p",
      { id: "both-verdict", class: both.agree ? "agree" : "disagree" },
      both.agree ? "The simulator gives the chip's verdict." : "The simulator's verdict is not the chip's.",
    ),
    h("table", { class: "data kv", id: "both" }, h("tbody", {}, rows.map(([k, v]) => h("tr", { dataset: { key: k } }, h("th", { scope: "row" }, k), h("td", {}, v))))),
    casesTable(both.cases || []),
  );
}
