// Live progress of one run, from its Server-Sent Events: a bar with the current phase, and a log
// of every step with the time since Run was pressed.

import { h } from "./dom.js";
import { seconds } from "./format.js";
import { doneTime, waitText } from "./runstatus.js";

// How far along each phase is, for the bar (cases fill the span between "compiled" and "timing").
const FRACTION = { submitting: 0.02, queued: 0.04, running: 0.08, started: 0.12, versions: 0.2, imported: 0.25, compiled: 0.5, timing: 0.92, memory: 0.96, done: 1 };

function describe(kind, data, expected) {
  switch (kind) {
    case "submitting":
      return "Submitting…";
    case "queued":
      return `Queued: position ${data.position} of ${data.queued}${waitText(data.eta_seconds, " · ")}`;
    case "running":
      return "Starting a sandbox…";
    case "started":
      return "Starting Python and JAX…";
    case "versions":
      return `JAX ${data.versions?.jax ?? "?"} ready; importing your code…`;
    case "imported":
      return "Compiling and running the first case…";
    case "compiled":
      return `Compiled (first call ${seconds(data.first_call_seconds)}); checking cases…`;
    case "case": {
      const of = data.of ?? expected ?? "?";
      const k = (data.index ?? 0) + 1;
      const verdict = data.result?.passed === false ? "differs" : data.result?.passed === true ? "matches" : "done";
      return k >= of ? `Case ${k} of ${of} ${verdict}; timing…` : `Case ${k} of ${of} ${verdict}; next case…`;
    }
    case "outputs":
      return "Outputs summarised; timing…";
    case "timing":
      return "Timed; measuring memory…";
    case "memory":
      return "Memory measured; finishing…";
    case "error":
      return "Your code raised an error; finishing…";
    case "progress":
      return runningText(data);
    case "lowering":
      return loweringText(data.check);
    default:
      return kind;
  }
}

/** Live step counts of the kernel running now (the harness sends them about once a second). */
function runningText(data) {
  const counts = [
    [data.grid_steps, "grid step"],
    [data.dmas, "DMA"],
    [data.semaphore_ops, "semaphore op"],
  ].filter(([n]) => n > 0).map(([n, what]) => `${n.toLocaleString("en")} ${what}${n === 1 ? "" : "s"}`);
  const where = [data.phase, data.case].filter(Boolean).join(", ");
  return `Running${where ? ` (${where})` : ""} for ${seconds(data.seconds)}${counts.length ? `: ${counts.join(", ")} so far` : ""}…`;
}

/** The TPU compiler's verdict on the chosen chip, as soon as it is known. */
function loweringText(check) {
  if (!check) return "TPU lowering checked";
  if (check.lowers === true) return `The TPU compiler accepts the kernel for ${check.chip}`;
  if (check.lowers === false) return `The TPU compiler rejects the kernel for ${check.chip}`;
  return `The TPU lowering check for ${check.chip} could not run`;
}

export class Progress {
  constructor(root, label, log) {
    this.root = root;
    this.label = label;
    this.log = log;
    this.track = root.querySelector("[role=progressbar]");
    this.fill = root.querySelector(".progress-fill");
    this.box = log.closest("details");
    this.summary = this.box.querySelector("summary");
    this.reset("Press Run (Ctrl+Enter) to check your kernel.");
  }

  reset(text) {
    this.t0 = performance.now();
    this.log.replaceChildren();
    this.box.hidden = true;
    this.set("idle", 0, text);
  }

  set(phase, fraction, text) {
    const pct = Math.round(fraction * 100);
    this.root.dataset.phase = phase;
    this.fill.style.width = `${pct}%`;
    this.track.setAttribute("aria-valuenow", String(pct));
    this.label.textContent = text;
  }

  start() {
    this.reset("Submitting…");
    this.box.hidden = false;
    this.box.open = true;
    this.summary.textContent = "Run log";
    this.step("submitting", {});
  }

  /** One event of the run; `expected` is how many cases the entry has (known before they run). */
  step(kind, data, expected = null) {
    const text = describe(kind, data, expected);
    let fraction = FRACTION[kind] ?? Number(this.track.getAttribute("aria-valuenow")) / 100;
    if (kind === "case") {
      const of = data.of || expected || 1;
      fraction = FRACTION.compiled + ((FRACTION.timing - FRACTION.compiled) * ((data.index ?? 0) + 1)) / (of + 1);
    }
    this.set(kind, fraction, text);
    const elapsed = (performance.now() - this.t0) / 1000;
    const line = h("li", { dataset: { kind } }, h("span", { class: "t mono" }, `${elapsed.toFixed(1)} s`), " ", text);
    // Step counts arrive every second: the newest replaces the one before instead of filling the log.
    if (kind === "progress" && this.log.lastElementChild?.dataset.kind === "progress") this.log.lastElementChild.replaceWith(line);
    else this.log.append(line);
  }

  finish(result) {
    const text = `Finished: ${result.status}${doneTime(result)}`;
    this.set("done", 1, text);
    const elapsed = (performance.now() - this.t0) / 1000;
    this.log.append(h("li", { dataset: { kind: "done" } }, h("span", { class: "t mono" }, `${elapsed.toFixed(1)} s`), " ", text));
    this.box.open = false;
    this.summary.textContent = `Run log: ${this.log.children.length} steps in ${elapsed.toFixed(1)} s`;
  }

  fail(text) {
    this.set("failed", 0, text);
  }
}
