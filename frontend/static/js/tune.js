// The Tune tab: sweep the kernel's keyword arguments (block sizes, ...) at a real problem size. Each
// config is checked in the simulator at a small size, lowered for the chips, checked against VMEM
// and estimated at the target size by the TPU time model (POST /api/sweeps); the table and heat map
// fill in as configs are judged, and the best one loads into the editor in one click.

import * as api from "./api.js";
import { fill, h } from "./dom.js";
import { bandText, boundText } from "./estimate.js";
import { bytes, num, seconds } from "./format.js";
import { heatMap, paramsText } from "./heatmap.js";
import { CONFIG_TEXT } from "./vocab.js";

/**
 * XLA's own op at the target size (the entry's plain-jnp reference, or a scratch file's xla_baseline),
 * estimated by the model and, on a TPU, measured once by the sweep; the best config's time as a ratio
 * of it, measured against measured where both are ("0.98× XLA's op, measured").
 */
export function baselineLine(configs, best, chip) {
  const estimated = configs.map((c) => c.estimate?.xla_seconds).find((v) => v > 0);
  const measured = configs.map((c) => c.xla_measured_seconds).find((v) => v > 0);
  const validation = configs.map((c) => c.estimate?.xla_validation).find((v) => v) ?? "";
  const notTimed = configs.map((c) => c.xla_not_measured).find((v) => v) ?? "";
  if (!estimated && !measured && !notTimed) return null;
  const parts = [];
  if (estimated) parts.push(`estimated ${seconds(estimated)}${validation ? ` (${validation})` : ""}`);
  if (measured) parts.push(`measured ${seconds(measured)} on the chip`);
  else if (notTimed) parts.push(`not timed on the chip: ${notTimed}`);
  let ratio = "";
  if (best && measured && best.measured_seconds > 0) ratio = ` The best config takes ${num(best.measured_seconds / measured)}× its time (both measured).`;
  else if (best && estimated && best.estimated_seconds > 0) ratio = ` The best config's estimate is ${num(best.estimated_seconds / estimated)}× its time.`;
  return h("p", { id: "tune-baseline", class: "muted", dataset: { estimated: estimated ?? "", measured: measured ?? "" } },
    `XLA's own op at this size on ${chip ?? "this chip"} (the reference, plain jnp, or the file's xla_baseline): ${parts.join(", ")}.${ratio}`);
}

/** The share of the roofline a config reaches: of its measured time where the chip timed it (the
 * estimate's roofline over it; past 1.02 the timing missed part of the run), else of its estimate. */
export function rooflineText(config) {
  const fraction = config.measured_seconds && config.estimated_seconds
    ? (config.estimated_seconds * (config.roofline_fraction ?? 0)) / config.measured_seconds
    : (config.roofline_fraction ?? 0);
  const text = `${num(100 * fraction)}% of the roofline`;
  return config.measured_seconds && fraction > 1.02 ? `${text} (faster than the chip's roofline: this timing missed part of the run)` : text;
}

/** What a measured time is: device time from profiler traces, and the host dispatch around it when known. */
function measuredTitle(config) {
  if (!config.measured_seconds) return null;
  const host = config.measured_host_seconds;
  return host == null ? "wall-clock repeats (no device events in the profiler trace)" : `device time from profiler traces; host dispatch ${seconds(host)} per call on top`;
}

/** "bm = 128, 256" lines (or ";"-separated) → {bm: [128, 256]}; values are numbers, true/false or text. */
export function parseParams(text) {
  const params = {};
  for (const line of text.split(/[\n;]/).map((l) => l.trim()).filter(Boolean)) {
    const [name, values = ""] = line.split(/=(.*)/s).map((p) => p.trim());
    if (!/^[A-Za-z_]\w*$/.test(name)) throw new Error(`not a parameter name: ${name}`);
    const parsed = values.split(",").map((v) => v.trim()).filter(Boolean).map(parseValue);
    if (!parsed.length) throw new Error(`${name}: give at least one value`);
    params[name] = parsed;
  }
  return params;
}

function parseValue(text) {
  if (/^-?\d+$/.test(text)) return Number.parseInt(text, 10);
  if (/^-?\d*\.\d+(e-?\d+)?$|^-?\d+e-?\d+$/i.test(text)) return Number.parseFloat(text);
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === "true";
  return text;
}

/** "m=4096, k=4096" → {m: 4096, k: 4096} (integers); `words` keeps the values as text (bindings). */
export function parsePairs(text, words = false) {
  const pairs = {};
  for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
    const [name, value] = part.split("=").map((p) => p?.trim());
    if (!name || value === undefined || value === "") throw new Error(`expected name=value, got ${part}`);
    if (!words && !/^\d+$/.test(value)) throw new Error(`${name}: ${value} is not a whole number`);
    pairs[name] = words ? value : Number.parseInt(value, 10);
  }
  return pairs;
}

const pairsText = (pairs) => Object.entries(pairs || {}).map(([k, v]) => `${k}=${v}`).join(", ");
const paramsLines = (params) => Object.entries(params || {}).map(([k, v]) => `${k} = ${v.join(", ")}`).join("\n");

function pyValue(value) {
  if (typeof value === "boolean") return value ? "True" : "False";
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * `source` with the defaults of `params` set in the signature of `def fnName(...)`. Returns
 * {source, missing}: the parameters that have no default there are left for the user.
 */
export function applyParams(source, fnName, params) {
  const def = new RegExp(`def\\s+${fnName}\\s*\\(`).exec(source);
  if (!def) return { source, missing: Object.keys(params) };
  let end = source.length;
  let depth = 0;
  for (let i = def.index + def[0].length - 1; i < source.length; i += 1) {
    if (source[i] === "(") depth += 1;
    else if (source[i] === ")" && (depth -= 1) === 0) {
      end = i;
      break;
    }
  }
  let signature = source.slice(def.index, end);
  const missing = [];
  for (const [name, value] of Object.entries(params)) {
    const pattern = new RegExp(`(\\b${name}\\s*(?::[^=,)]*)?=\\s*)([^,)\\n]+)`);
    if (pattern.test(signature)) signature = signature.replace(pattern, (_, head) => head + pyValue(value));
    else missing.push(name);
  }
  return { source: source.slice(0, def.index) + signature + source.slice(end), missing };
}

function lowering(config) {
  return (config.lowering || []).map((v) => `${v.chip} ${v.lowers === true ? "✓" : v.lowers === false ? "✗" : "?"}`).join(" ");
}

function configRow(config, names, best) {
  const est = config.estimated_seconds;
  return h(
    "tr",
    { class: config.index === best ? "best" : null, dataset: { index: config.index, status: config.status, params: paramsText(config.params), seconds: est ?? "" } },
    names.map((n) => h("td", { class: "num mono" }, String(config.params[n]))),
    h("td", {}, h("span", { class: "badge", dataset: { status: config.status === "ok" ? "passed" : config.status === "wrong" ? "mismatch" : "error" } }, CONFIG_TEXT[config.status] || config.status)),
    h("td", { class: "num mono", title: config.estimate ? bandText(config.estimate) : null }, est === null || est === undefined ? "—" : seconds(est)),
    h("td", { class: "num mono" }, config.roofline_fraction === null || config.roofline_fraction === undefined ? "—" : `${num(100 * config.roofline_fraction)}%`),
    h("td", { class: "num mono", title: measuredTitle(config) }, config.measured_seconds ? seconds(config.measured_seconds) : "—"),
    h("td", { class: "num mono" }, bytes(config.vmem_bytes)),
    h("td", { class: "mono" }, lowering(config)),
    h("td", { class: "why" }, config.reason),
  );
}

export class TunePanel {
  /**
   * @param {HTMLElement} root the Tune tab's panel
   * @param {{current: () => object, entry: () => object|null, chips: () => string[],
   *          load: (text: string, what: string) => void, notices: object}} hooks
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.sweep = null;
    this.follower = null;
    this.configs = new Map();
    this.spec = null;
    this.result = null;
    this.build();
  }

  build() {
    const field = (id, text, input) => h("label", { class: "tune-field", for: id }, h("span", {}, text), input);
    this.params = h("textarea", { id: "tune-params", rows: 3, spellcheck: "false", placeholder: "bm = 128, 256, 512" });
    this.size = h("input", { id: "tune-size", type: "text", spellcheck: "false", placeholder: "m=4096, k=4096, n=4096" });
    this.check = h("input", { id: "tune-check", type: "text", spellcheck: "false", placeholder: "m=256, k=256, n=256 (default: the entry's, or make_inputs' defaults)" });
    this.bind = h("input", { id: "tune-bind", type: "text", spellcheck: "false", placeholder: "bm=m, bk=k, bn=n" });
    this.allChips = h("input", { id: "tune-all-chips", type: "checkbox" });
    this.metric = h("select", { id: "tune-metric", onchange: () => this.render() }, h("option", { value: "time" }, "estimated time"), h("option", { value: "roofline" }, "% of roofline"));
    this.startButton = h("button", { id: "tune-start", type: "button", class: "primary", onclick: () => this.start() }, "Tune");
    this.cancelButton = h("button", { id: "tune-cancel", type: "button", disabled: true, onclick: () => this.cancel() }, "Cancel");
    this.progress = h("p", { id: "tune-progress", class: "muted" }, "Name the parameters to sweep and the size to estimate at, then press Tune.");
    this.output = h("div", { id: "tune-output" });
    this.root.replaceChildren(
      h("p", { class: "muted" }, "Every config is run in the simulator at a small size (its blocks fitted), lowered for the TPU, checked against the chip's VMEM and estimated at the target size by the TPU time model. Scratch files: make_inputs(seed, **size) and kernel(*inputs, **params)."),
      h("p", { id: "tune-trust", class: "muted" }, "Verdict: a config's ok or wrong is checked outside the sweep's process, against the entry's reference (scratch: the file's own reference). Estimates, VMEM, lowering and measured times are as reported by the sweep's process."),
      h("div", { class: "tune-form" },
        field("tune-params", "Parameters (one per line: name = values)", this.params),
        field("tune-size", "Target size", this.size),
        field("tune-check", "Check size", this.check),
        field("tune-bind", "Blocks tile (parameter=dimension)", this.bind),
        h("label", { class: "tune-check-box" }, this.allChips, " also lower for every chip"),
        h("div", { class: "tune-actions" }, this.startButton, this.cancelButton, h("label", {}, "Color by ", this.metric))),
      this.progress,
      this.output,
    );
  }

  /** Fill the form from an entry's [tune] table (or clear it for scratch mode). */
  entryChanged(entry) {
    const tune = entry?.tune;
    this.params.value = tune ? paramsLines(tune.values) : "";
    this.size.value = tune ? pairsText(tune.size) : "";
    this.check.value = tune ? pairsText(tune.check) : "";
    this.bind.value = tune ? pairsText(tune.bind) : "";
  }

  request() {
    const state = this.hooks.current();
    const body = { source: state.source, entry: state.entry, chip: state.chip, mode: "auto", options: state.options };
    body.params = parseParams(this.params.value);
    if (this.size.value.trim()) body.size = parsePairs(this.size.value);
    if (this.check.value.trim()) body.check_size = parsePairs(this.check.value);
    if (this.bind.value.trim()) body.bind = parsePairs(this.bind.value, true);
    if (this.allChips.checked) body.lower_chips = this.hooks.chips();
    return body;
  }

  async start() {
    if (this.sweep) return;
    let body;
    try {
      body = this.request();
    } catch (error) {
      this.progress.textContent = `Not started: ${error.message}`;
      return;
    }
    this.setBusy(true);
    this.configs = new Map();
    this.result = null;
    this.spec = { params: body.params };
    this.output.replaceChildren();
    this.progress.textContent = "Submitting…";
    try {
      this.sweep = await api.createSweep(body);
    } catch (error) {
      this.setBusy(false);
      this.progress.textContent = `Not started: ${error.title}`;
      this.hooks.notices.problem(error, "The sweep was refused");
      return;
    }
    this.total = this.sweep.total;
    this.progress.textContent = `Queued: ${this.total} configs in ${this.sweep.shards} job${this.sweep.shards > 1 ? "s" : ""}.`;
    this.follower = api.followSweep(this.sweep, (kind, data) => this.onEvent(kind, data));
  }

  onEvent(kind, data) {
    if (kind === "queued") this.progress.textContent = `Queued (position ${data.position ?? "?"}): ${this.total} configs.`;
    else if (kind === "running") this.progress.textContent = `Running: 0 of ${this.total} configs judged.`;
    else if (kind === "config") {
      this.configs.set(data.result.index, data.result);
      this.progress.textContent = `Running: ${data.judged} of ${data.total} configs judged.`;
      this.progress.dataset.judged = data.judged;
      this.render();
    } else if (kind === "error") this.hooks.notices.show("error", `A sweep job failed: ${data.error?.type ?? ""}: ${data.error?.message ?? ""}`);
    else if (kind === "done" || kind === "lost") this.finish(kind === "done" ? data : null, data.message);
  }

  finish(result, lost) {
    this.result = result;
    if (result?.sweep) {
      this.spec = result.sweep.spec;
      for (const c of result.sweep.configs) this.configs.set(c.index, c);
    }
    this.progress.textContent = result ? result.summary : `The sweep was lost: ${lost}`;
    this.progress.dataset.status = result?.status ?? "lost";
    this.sweep = null;
    this.follower = null;
    this.setBusy(false);
    this.render();
  }

  async cancel() {
    if (!this.sweep) return;
    this.cancelButton.disabled = true;
    try {
      await api.cancelSweep(this.sweep.id);
    } catch (error) {
      this.hooks.notices.problem(error, "The sweep could not be cancelled");
    }
  }

  setBusy(busy) {
    this.startButton.disabled = busy;
    this.cancelButton.disabled = !busy;
    this.root.dataset.busy = busy ? "1" : "0";
  }

  bestConfig() {
    const index = this.result?.sweep?.best;
    return index === null || index === undefined ? null : this.configs.get(index) ?? null;
  }

  loadBest() {
    const best = this.bestConfig();
    const entry = this.hooks.entry();
    if (!best) return;
    const fnName = entry ? entry.entry_point : "kernel";
    const { source, missing } = applyParams(this.hooks.current().source, fnName, best.params);
    this.hooks.load(source, `the best config into ${fnName}'s defaults (${paramsText(best.params)})`);
    if (missing.length) this.hooks.notices.show("warning", `${fnName} has no default for ${missing.join(", ")}: set ${missing.map((m) => `${m}=${best.params[m]}`).join(", ")} yourself.`);
  }

  render() {
    if (!this.spec) return;
    const configs = [...this.configs.values()].sort((a, b) => a.index - b.index);
    const names = Object.keys(this.spec.params);
    const best = this.bestConfig();
    const head = [...names, "status", "estimate", "roofline", "measured", "VMEM", "lowering", "why"];
    fill(this.output,
      best
        ? h("div", { id: "tune-best", class: "tune-best", dataset: { index: best.index, params: paramsText(best.params) } },
            h("strong", {}, `Best: ${paramsText(best.params)}`),
            ` — ${seconds(best.measured_seconds ?? best.estimated_seconds)} ${best.measured_seconds ? "measured" : "estimated"}, ${boundText(best.bound)}, ${rooflineText(best)}. `,
            h("button", { id: "tune-load-best", type: "button", onclick: () => this.loadBest() }, "Load best into the editor"))
        : null,
      baselineLine(configs, best, this.result?.sweep?.chip),
      heatMap(this.spec, configs, this.metric.value, best?.index ?? null),
      h("div", { class: "table-wrap" },
        h("table", { class: "data", id: "tune-table", dataset: { rows: configs.length } },
          h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, configs.map((c) => configRow(c, names, best?.index ?? null))))),
    );
  }
}
