// What the TPU compiler says about a kernel that ran in the simulator: the lowering verdict for the
// chosen chip, static chip warnings, the side-by-side of every chip ("check on all chips"), and the
// IR views (jaxpr, Mosaic MLIR, StableHLO) with a search and a link from IR lines to source lines.

import { h } from "./dom.js";
import { bytes, isNum, percent, seconds } from "./format.js";

const IR_KINDS = [
  ["jaxpr", "jaxpr"],
  ["mosaic", "Mosaic MLIR"],
  ["stablehlo", "StableHLO"],
];

function verdictBadge(lowers) {
  const [text, state] = lowers === true ? ["lowers", "yes"] : lowers === false ? ["rejected", "no"] : ["not checked", "unknown"];
  return h("span", { class: "lower-badge", dataset: { lowers: state } }, text);
}

function gotoButton(line, onGoToLine) {
  return h("button", { type: "button", class: "link goto-line", dataset: { line }, onclick: () => onGoToLine(line) }, `line ${line}`);
}

function verdictText(report) {
  if (report.lowers === true && report.compiled === true) {
    return `Compiles for ${report.chip}: the chip's own compiler accepted it (${report.compiler}).`;
  }
  if (report.lowers === true) {
    const kernels = report.kernels === 1 ? "1 kernel" : `${report.kernels} kernels`;
    return `Lowers for ${report.chip} with the real Pallas → Mosaic lowering (${kernels}, ${seconds(report.seconds)}). ` +
      "Only libtpu's compile on a real TPU can reject it now.";
  }
  if (report.lowers === false && report.compiled === false) {
    return `Passes in the simulator, refused by the chip's own compiler for ${report.chip} (${report.compiler}):`;
  }
  if (report.lowers === false) return `Passes in the simulator, rejected by the TPU compiler for ${report.chip}:`;
  return report.note || `The TPU lowering was not checked for ${report.chip}.`;
}

/** The "TPU compiler" section of a result: verdict, warnings, per-chip table, the all-chips button. */
export function loweringSection(result, { onGoToLine, onCheckAllChips, chips }) {
  const report = result.lowering;
  const warnings = result.chip_warnings || [];
  if (!report && !warnings.length) return null;
  const error = report?.lowers === false ? report.error : null;
  return h(
    "section",
    { id: "compiler-section", class: "result-section" },
    h("h3", {}, "TPU compiler"),
    report
      ? h("p", { id: "lowering", class: "lowering", dataset: { chip: report.chip, lowers: String(report.lowers), compiled: String(report.compiled ?? null) } }, verdictBadge(report.lowers), " ", verdictText(report))
      : null,
    error
      ? h("pre", { class: "traceback", id: "lowering-error" }, `${error.type}: ${error.message}`)
      : null,
    error?.line ? h("p", {}, "At ", gotoButton(error.line, onGoToLine), " of your code.") : null,
    warnings.length
      ? h("ul", { class: "warnings", id: "chip-warnings" }, warnings.map((w) => h("li", { dataset: { chip: result.chip } }, w)))
      : null,
    result.lowerings?.length ? chipTable(result, chips) : null,
    onCheckAllChips && !result.lowerings?.length
      ? h("button", { type: "button", id: "check-all-chips", onclick: onCheckAllChips }, "Check on all chips")
      : null,
    report && report.lowers !== null ? h("p", { class: "muted" }, "The IR tab shows what it lowers to.") : null,
  );
}

function vmemFit(result, chip) {
  const used = result.memory?.vmem_bytes;
  if (!isNum(used) || !chip) return "—";
  const text = `${bytes(used)} of ${bytes(chip.vmem_bytes)} (${percent(used, chip.vmem_bytes)})`;
  return used > chip.vmem_bytes ? `does not fit: ${text}` : text;
}

function chipTable(result, chips) {
  const byName = new Map((chips || []).map((c) => [c.name, c]));
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "data", id: "chip-table" },
      h("thead", {}, h("tr", {}, ["Chip", "Lowers?", "VMEM", "Warnings"].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        result.lowerings.map((r) =>
          h(
            "tr",
            { dataset: { chip: r.chip, lowers: String(r.lowers), warnings: (r.warnings || []).length } },
            h("td", {}, byName.get(r.chip)?.title ?? r.chip),
            h("td", {}, verdictBadge(r.lowers), r.lowers === false && r.error ? h("div", { class: "muted cell-note" }, r.error.message) : null),
            h("td", { class: "mono" }, vmemFit(result, byName.get(r.chip))),
            h("td", { class: "cell-note" }, (r.warnings || []).length ? h("ul", { class: "warnings" }, r.warnings.map((w) => h("li", {}, w))) : "none"),
          ),
        ),
      ),
    ),
  );
}

// -- IR viewer -----------------------------------------------------------------------------------

/** Fill the IR panel from a result's lowering reports. Returns false when there is no IR to show. */
export function renderIr(root, result, { onGoToLine }) {
  const reports = [result.lowering, ...(result.lowerings || [])].filter((r) => r && (r.jaxpr || r.mosaic || r.stablehlo));
  const unique = [...new Map(reports.map((r) => [r.chip, r])).values()];
  if (!unique.length) {
    const why = result.lowering?.lowers === false
      ? "The kernel did not lower for the TPU, so there is no Mosaic or StableHLO to show. The TPU compiler section of the results says why."
      : "No IR yet: run a kernel in interpret mode; each run lowers it for the chosen chip.";
    root.replaceChildren(h("p", { class: "muted", id: "ir-empty" }, why));
    return false;
  }
  // Mosaic first (what the TPU compiler gets); a kernel that did not lower may still have a jaxpr.
  const kind = ["mosaic", "jaxpr", "stablehlo"].find((k) => unique[0][k]);
  const view = { report: unique[0], kind, query: "", at: 0 };
  const chipSelect = h(
    "select",
    { id: "ir-chip", "aria-label": "Chip", onchange: (e) => ((view.report = unique.find((r) => r.chip === e.target.value)), draw()) },
    unique.map((r) => h("option", { value: r.chip }, r.chip)),
  );
  const kindButtons = IR_KINDS.map(([kind, label]) =>
    h("button", { type: "button", class: "ir-kind", dataset: { kind }, "aria-pressed": "false", onclick: () => ((view.kind = kind), draw()) }, label),
  );
  const search = h("input", { id: "ir-search", type: "search", placeholder: "Search the IR", "aria-label": "Search the IR" });
  const counter = h("span", { id: "ir-count", class: "muted", "aria-live": "polite" });
  const next = h("button", { type: "button", id: "ir-next", title: "Next match (Enter)" }, "↓");
  const prev = h("button", { type: "button", id: "ir-prev", title: "Previous match (Shift+Enter)" }, "↑");
  const meta = h("p", { id: "ir-meta", class: "muted" });
  const body = h("div", { id: "ir-text", class: "ir-text mono", role: "region", "aria-label": "IR text", tabindex: "0" });
  root.replaceChildren(
    h("div", { class: "ir-toolbar" }, unique.length > 1 ? chipSelect : null, h("div", { class: "segmented ir-kinds" }, kindButtons), search, prev, next, counter),
    meta,
    body,
  );

  function draw() {
    const ir = view.report[view.kind];
    for (const b of kindButtons) b.setAttribute("aria-pressed", String(b.dataset.kind === view.kind));
    if (!ir) {
      meta.textContent = "";
      body.replaceChildren(h("p", { class: "muted" }, `No ${view.kind} for ${view.report.chip}.`));
      counter.textContent = "";
      return;
    }
    const sourceOf = new Map((ir.source_lines || []).map(([irLine, src]) => [irLine, src]));
    const lines = ir.text.split("\n");
    body.dataset.kind = view.kind;
    body.dataset.lines = lines.length;
    body.replaceChildren(...lines.map((text, i) => irLine(text, i + 1, sourceOf.get(i + 1), onGoToLine)));
    meta.textContent = `${view.report.chip} · ${lines.length.toLocaleString("en-US")} lines` +
      (ir.truncated ? ` · truncated: showing ${ir.text.length.toLocaleString("en-US")} of ${ir.total_chars.toLocaleString("en-US")} characters` : "") +
      (sourceOf.size ? " · lines with a source line are clickable" : "");
    meta.dataset.truncated = String(Boolean(ir.truncated));
    find(0);
  }

  function find(step) {
    const query = search.value.trim().toLowerCase();
    const rows = [...body.querySelectorAll(".ir-line")];
    const hits = [];
    for (const row of rows) {
      const hit = query !== "" && row.textContent.toLowerCase().includes(query);
      row.classList.toggle("match", hit);
      row.classList.remove("current");
      if (hit) hits.push(row);
    }
    if (query !== view.query) view.at = 0;
    view.query = query;
    if (!hits.length) {
      counter.textContent = query ? "no match" : "";
      return;
    }
    view.at = (view.at + step + hits.length) % hits.length;
    hits[view.at].classList.add("current");
    hits[view.at].scrollIntoView({ block: "nearest" });
    counter.textContent = `${view.at + 1} of ${hits.length}`;
  }

  search.addEventListener("input", () => find(0));
  search.addEventListener("keydown", (e) => e.key === "Enter" && (e.preventDefault(), find(e.shiftKey ? -1 : 1)));
  next.addEventListener("click", () => find(1));
  prev.addEventListener("click", () => find(-1));
  draw();
  return true;
}

function irLine(text, number, sourceLine, onGoToLine) {
  const props = { class: "ir-line", dataset: { line: number } };
  if (sourceLine) {
    props.dataset.sourceLine = sourceLine;
    props.title = `from line ${sourceLine} of your code`;
    props.onclick = () => onGoToLine(sourceLine);
  }
  return h("div", props, h("span", { class: "ir-no" }, String(number)), h("span", { class: "ir-src" }, sourceLine ? String(sourceLine) : ""), text || " ");
}
