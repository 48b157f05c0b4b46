// This browser's run history: every finished run with its result (trimmed: no trace, no IR texts,
// short output), newest first, capped in count and size, kept in localStorage. The History tab
// lists them; any two can be compared side by side (status, errors, timings, memory), and any one
// reopened (its code back in the editor, its result in the Results tab).

import { fill, h } from "./dom.js";
import { bytes, ratio, seconds } from "./format.js";

const HISTORY_KEY = "pp:history";
export const MAX_RUNS = 25;
export const MAX_BYTES = 600_000;
const STREAM_CHARS = 2000;

/** A result as the history keeps it: what a reader compares, without the bulky parts. */
export function trimForHistory(result) {
  const { trace, lowerings, ...kept } = result;
  if (kept.lowering) {
    const { jaxpr, mosaic, stablehlo, ...verdict } = kept.lowering;
    kept.lowering = verdict;
  }
  for (const name of ["stdout", "stderr"]) {
    if ((kept[name] || "").length > STREAM_CHARS) {
      kept[name] = kept[name].slice(0, STREAM_CHARS);
      kept[`${name}_truncated`] = true;
    }
  }
  return kept;
}

/** `runs` (newest first) cut to at most `max` runs and `maxBytes` of JSON, dropping the oldest. */
export function capHistory(runs, { max = MAX_RUNS, maxBytes = MAX_BYTES } = {}) {
  const kept = runs.slice(0, max);
  while (kept.length > 1 && JSON.stringify(kept).length > maxBytes) kept.pop();
  return kept;
}

const median = (stats) => stats?.median ?? null;

/** The rows of a side-by-side comparison of two history records: [label, left, right, differ]. */
export function compareRows(a, b) {
  const row = (label, pick, show = (v) => (v === null || v === undefined || v === "" ? "—" : String(v))) => {
    const [x, y] = [pick(a), pick(b)];
    return [label, show(x), show(y), show(x) !== show(y)];
  };
  const passedCases = (r) => (r.result.cases || []).length ? `${r.result.cases.filter((c) => c.passed).length} of ${r.result.cases.length}` : null;
  const error = (r) => (r.result.error ? `${r.result.error.type}: ${r.result.error.message}` : null);
  return [
    row("When", (r) => new Date(r.at).toLocaleString()),
    row("Entry", (r) => r.entry ?? "scratch"),
    row("Chip", (r) => r.chip),
    row("Status", (r) => r.result.status),
    row("Summary", (r) => r.result.summary),
    row("Error", error),
    row("Cases passed", passedCases),
    row("Kernel (median)", (r) => median(r.result.timing?.kernel), seconds),
    row("XLA reference (median)", (r) => median(r.result.timing?.reference), seconds),
    row("Kernel / reference", (r) => r.result.timing?.ratio_to_reference ?? null, ratio),
    row("First call", (r) => r.result.timing?.first_call_seconds ?? null, seconds),
    row("VMEM", (r) => r.result.memory?.vmem_bytes ?? null, bytes),
    row("SMEM", (r) => r.result.memory?.smem_bytes ?? null, bytes),
    row("Peak host memory", (r) => r.result.memory?.peak_rss_bytes ?? null, bytes),
    row("jax", (r) => r.result.versions?.jax ?? null),
    row("Lines of code", (r) => r.source.split("\n").length),
  ];
}

export class RunHistory {
  /**
   * @param {HTMLElement} root the History tab's content
   * @param {{storage: object, onOpen: (record: object) => void}} hooks
   *   onOpen: put a record's code back in the editor and show its result
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.picked = [];
    this.render();
  }

  get runs() {
    try {
      const runs = JSON.parse(this.hooks.storage.get(HISTORY_KEY) || "[]");
      return Array.isArray(runs) ? runs : [];
    } catch {
      return [];
    }
  }

  /** Keep a finished run: `state` is the editor state it ran ({source, entry, chip, options}). */
  add(state, result, runId = null) {
    const record = { id: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`, at: Date.now(), runId, ...state, result: trimForHistory(result) };
    this.hooks.storage.set(HISTORY_KEY, JSON.stringify(capHistory([record, ...this.runs])));
    this.render();
    return record;
  }

  clear() {
    this.hooks.storage.set(HISTORY_KEY, null);
    this.picked = [];
    this.render();
  }

  pick(id, on) {
    this.picked = on ? [...this.picked.filter((p) => p !== id), id].slice(-2) : this.picked.filter((p) => p !== id);
    this.render();
  }

  render() {
    const runs = this.runs;
    this.picked = this.picked.filter((id) => runs.some((r) => r.id === id));
    if (!runs.length) {
      this.root.replaceChildren(h("p", { class: "muted", id: "history-empty" }, "No runs yet in this browser. Every run you make is kept here (the last 25), with its result."));
      return;
    }
    const items = runs.map((r) =>
      h(
        "li",
        { class: "history-run", dataset: { id: r.id, status: r.result.status } },
        h("label", { class: "history-pick" }, h("input", { type: "checkbox", checked: this.picked.includes(r.id), "aria-label": `Compare the run of ${new Date(r.at).toLocaleTimeString()}`, onchange: (e) => this.pick(r.id, e.target.checked) })),
        h("span", { class: "badge", dataset: { status: r.result.status } }, r.result.status),
        h("span", { class: "history-what" }, `${r.entry ?? "scratch"} · ${r.chip} · ${new Date(r.at).toLocaleString()}`),
        h("button", { type: "button", class: "link history-open", onclick: () => this.hooks.onOpen(r) }, "Open"),
      ),
    );
    const [a, b] = this.picked.map((id) => runs.find((r) => r.id === id));
    fill(this.root,
      h("p", { class: "muted" }, "Tick two runs to compare them side by side."),
      h("ol", { class: "history-list", id: "history-list" }, items),
      a && b ? this.comparison(b, a) : null,
      h("button", { type: "button", id: "history-clear", onclick: () => this.clear() }, "Forget these runs"),
    );
  }

  /** The older run on the left. */
  comparison(a, b) {
    const [left, right] = a.at <= b.at ? [a, b] : [b, a];
    const rows = compareRows(left, right);
    return h(
      "section",
      { class: "result-section", id: "compare" },
      h("h3", {}, "Compare"),
      h("div", { class: "table-wrap" },
        h("table", { class: "data compare", id: "compare-table" },
          h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", { scope: "col" }, "Earlier run"), h("th", { scope: "col" }, "Later run"))),
          h("tbody", {}, rows.map(([label, x, y, differ]) => h("tr", { class: differ ? "differ" : null, dataset: { row: label } }, h("th", { scope: "row" }, label), h("td", {}, x), h("td", {}, y)))))),
    );
  }
}
