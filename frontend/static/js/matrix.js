// "Run on all versions": one kernel on every installed JAX runtime (POST /api/matrices), followed until
// every runtime has finished, shown as a table whose row marks the first version where the outcome
// changes; and the diff of two of its runs ("Re-run on today's JAX" for a share made on an older one).

import * as api from "./api.js";
import { h, section } from "./dom.js";
import { bytes, num, seconds } from "./format.js";

const POLL_MS = 700;
const VERDICT = { true: "✓", false: "✗", null: "—" };

/** The body of POST /api/matrices for an editor state; `runtimes`: null for every installed one. */
export function matrixRequest({ source, entry, chip, options }, runtimes = null) {
  const body = { source, entry, chip, mode: "auto", options };
  if (runtimes) body.runtimes = runtimes;
  return body;
}

/** The runtimes from which the outcome differs from the version before. */
export function changedAt(matrix) {
  return new Set((matrix.changes || []).map((change) => change.newer));
}

/** The chips the matrix has a compiler verdict for, in the order the rows name them. */
export function compilerChips(matrix) {
  return [...new Set((matrix.rows || []).flatMap((row) => Object.keys(row.compiler || {})))];
}

function statusCell(row) {
  if (row.state !== "done") return h("td", { class: "muted" }, row.state);
  return h("td", {}, h("span", { class: "badge", dataset: { status: row.status || "error" } }, row.status || "gone"));
}

function rowOf(row, chips, changed) {
  const notes = [row.status && row.status !== "passed" ? row.summary : null, ...(row.unavailable || [])].filter(Boolean);
  return h(
    "tr",
    { dataset: { runtime: row.runtime, status: row.status || row.state, change: changed.has(row.runtime) ? "1" : "0" } },
    h("th", { scope: "row" }, `jax ${row.runtime}`, changed.has(row.runtime) ? h("span", { class: "change-mark", title: "the outcome changes here" }, " ◀ changes") : null),
    statusCell(row),
    h("td", { class: "num" }, num(row.max_abs_error)),
    h("td", { class: "num" }, seconds(row.kernel_seconds)),
    h("td", { class: "num" }, bytes(row.vmem_bytes)),
    h("td", { class: "num" }, bytes(row.peak_rss_bytes)),
    ...chips.map((chip) => {
      const verdict = row.compiler?.[chip];
      return h("td", { class: "verdict", dataset: { chip, lowers: String(verdict ?? "null") } }, VERDICT[String(verdict ?? null)]);
    }),
    h("td", { class: "matrix-notes" }, notes.length ? h("details", {}, h("summary", {}, `${notes.length} note${notes.length > 1 ? "s" : ""}`), h("ul", {}, notes.map((n) => h("li", {}, n)))) : ""),
  );
}

/** The matrix as a table: one row per JAX version, oldest first. */
export function matrixTable(matrix) {
  const chips = compilerChips(matrix);
  const changed = changedAt(matrix);
  const head = ["JAX", "status", "max error", "kernel time", "VMEM", "host memory", ...chips.map((c) => `compiler ${c}`), "notes"];
  return h(
    "table",
    { id: "matrix-table", class: "data matrix-table" },
    h("thead", {}, h("tr", {}, head.map((text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, (matrix.rows || []).map((row) => rowOf(row, chips, changed))),
  );
}

export function renderMatrix(root, matrix) {
  const timed = (matrix.rows || []).some((row) => row.simulated);
  root.replaceChildren(
    section(
      "matrix-section",
      "On every JAX version",
      h("p", { id: "matrix-verdict", class: "matrix-verdict" }, matrix.verdict || "Running on every version…"),
      h("div", { class: "table-wrap" }, matrixTable(matrix)),
      ...(matrix.skipped || []).map((s) => h("p", { class: "muted matrix-skipped" }, `Not run on jax ${s.runtime}: ${s.reason}.`)),
      timed ? h("p", { class: "muted" }, "Kernel times are CPU simulation (TPU interpret mode), not TPU performance.") : null,
    ),
  );
  root.dataset.state = matrix.state;
}

function diffLine(line) {
  const kind = /^(\+\+\+|---) /.test(line) ? "file" : line.startsWith("@@") ? "hunk" : { "+": "add", "-": "del" }[line[0]] ?? "same";
  return h("span", { class: `diff-${kind}` }, `${line}\n`);
}

/** What changed between two runs: a table of facts (changed ones marked) and the Mosaic IR's diff. */
export function diffSection(diff) {
  return section(
    "diff-section",
    `jax ${diff.older} → jax ${diff.newer}`,
    h("div", { class: "table-wrap" }, diffTable(diff)),
    h("p", { id: "ir-diff-note" }, `Mosaic IR: ${diff.mosaic_note}${diff.mosaic_truncated ? " (diff truncated)" : ""}`),
    diff.mosaic_diff ? h("pre", { id: "ir-diff", class: "ir-diff" }, diff.mosaic_diff.split("\n").map(diffLine)) : null,
  );
}

function diffTable(diff) {
  const row = (f) =>
    h("tr", { dataset: { field: f.name, changed: f.changed ? "1" : "0" } }, h("th", { scope: "row" }, f.name), h("td", {}, f.older), h("td", {}, f.newer));
  return h(
    "table",
    { id: "diff-table", class: "data diff-table" },
    h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, `jax ${diff.older}`), h("th", {}, `jax ${diff.newer}`))),
    h("tbody", {}, diff.fields.map(row)),
  );
}

export class MatrixControl {
  /**
   * @param {HTMLElement} root where the matrix (and a diff) is shown
   * @param {import("./notices.js").Notices} notices where a refused request is explained
   * @param {{setRunning: (running: boolean) => void, done?: (matrix: object) => void}} hooks
   */
  constructor(root, notices, hooks) {
    this.root = root;
    this.notices = notices;
    this.hooks = hooks;
    this.busy = false;
  }

  clear() {
    this.root.replaceChildren();
    this.root.hidden = true;
    delete this.root.dataset.state;
  }

  /** Run a `matrixRequest` body; with `diff: [older, newer]`, show those two runs' diff when done. */
  async start(body, { diff = null } = {}) {
    if (this.busy) return;
    this.busy = true;
    this.hooks.setRunning(true);
    this.notices.clearProblem();
    this.root.hidden = false;
    try {
      let matrix = await api.createMatrix(body);
      renderMatrix(this.root, matrix);
      while (matrix.state !== "done") {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        matrix = await api.getMatrix(matrix.id);
        renderMatrix(this.root, matrix);
      }
      this.hooks.done?.(matrix);
      if (diff) {
        this.root.dataset.state = "diffing";
        this.root.append(diffSection(await api.getMatrixDiff(matrix.id, diff[0], diff[1])));
        this.root.dataset.state = "done";
      }
    } catch (error) {
      this.notices.problem(error, "Could not run on every version");
      this.root.dataset.state = "failed";
    } finally {
      this.busy = false;
      this.hooks.setRunning(false);
    }
  }
}
