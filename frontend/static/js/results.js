// Renders a RunResult (see sandbox/protocol.py) as DOM: status, error, outputs, timing, memory, and
// the sections of the modules it gathers (cases.js, roofline.js, lowering.js). Every string from a
// run is text, never markup. Fields may be missing or new (other parts of the playground grow the
// result): absent ones are skipped, unknown ones are shown as JSON text under "More details".

import { casesSection, errorMapsSection, mismatchSection, racesSection } from "./cases.js";
import { memoryBar } from "./charts.js";
import { h, section } from "./dom.js";
import { estimateSection } from "./estimate.js";
import { bytes, count, isNum, num, ratio, seconds, shape } from "./format.js";
import { loweringSection } from "./lowering.js";
import { userLine } from "./marks.js";
import { rooflineSection } from "./roofline.js";
import { phasesLine } from "./phases.js";
import { traceSummary } from "./tracesummary.js";
import { STATUS_TEXT } from "./vocab.js";

// The fields of a RunResult and of one of its cases (RunResult and CaseResult in
// sandbox/protocol.py) that this view shows in their own place; any other field is shown under
// "More details". tests/e2e/test_js_units.py holds these lists to the dataclasses.
export const RESULT_FIELDS = [
  "status", "summary", "chip", "mode", "options", "cases", "outputs", "error", "timing", "memory",
  "stdout", "stderr", "stdout_truncated", "stderr_truncated", "versions", "limit", "wall_seconds",
  "cached_from", "cached_at", "lowering", "lowerings", "chip_warnings", "trace", "estimate", "sweep",
  "checked_by", "phases", "ran_on_chip", "host_timing", "both",
];
export const CASE_FIELDS = ["name", "dtype", "dims", "input_shapes", "tolerance", "passed", "outputs", "seconds", "note", "races", "kernels"];

function statusLine(result) {
  const status = result.status || "running";
  return h(
    "div",
    { class: "status-line" },
    h("span", { id: "status", class: "badge", dataset: { status } }, STATUS_TEXT[status] || status),
    h("span", { id: "summary", class: "summary" }, shortSummary(result)),
  );
}

// Who made the verdict (the checker, outside the kernel's process), and what the kernel's own
// process reported: the timings, memory, trace and estimate below come from the process that ran
// the user's code, so a kernel could have changed them; the verdict it could not.
function trustNote(result) {
  if (!result.checked_by) return null;
  return h(
    "p",
    { class: "muted trust-note", id: "checked-by" },
    `Verdict: checked against ${result.checked_by}. Timings, memory, the trace and the estimate are as reported by the kernel's own process.`,
  );
}

/** Mode `both` (a TPU server only): its section's module is imported when a result has one, not with
 * the page (later.js's rule: a first visit downloads only what shows the editor). */
function sideBySide(both) {
  if (!both) return null;
  const slot = h("div", { id: "both-slot" });
  import("./sidebyside.js").then((m) => slot.replaceWith(m.sideBySideSection(both)));
  return slot;
}

/** The summary, less the error's own words when the Error section below says them ("error in kernel (line 47)"). */
export function shortSummary(result) {
  const summary = result.summary || "";
  const error = result.error;
  return error?.message ? summary.replace(`: ${error.type}: ${error.message}`, "") : summary;
}

/** A traceback without its last line when that line is the error the section's head already says. */
export function tracebackBody(error) {
  const lines = String(error.traceback || "").trimEnd().split("\n");
  if (lines.at(-1) === `${error.type}: ${error.message}`) lines.pop();
  return lines.join("\n");
}

function errorSection(error, onGoToLine) {
  const line = userLine(error);
  const where = error.phase ? ` during ${error.phase}` : "";
  return section(
    "error-section",
    "Error",
    h(
      "p",
      { class: "error-head" },
      error.limitation
        ? h("span", { class: "badge limitation", id: "limitation", title: "This fails because JAX's TPU interpret mode lacks the feature, not because of your kernel." }, "interpret-mode limitation")
        : null,
      h("strong", { class: "error-type" }, error.type || "Error"),
      `${where}: `,
      h("span", { class: "error-message" }, error.message || ""),
      line
        ? h("button", { type: "button", class: "link goto-line", dataset: { line }, onclick: () => onGoToLine(line) }, `line ${line}`)
        : null,
    ),
    error.traceback ? h("pre", { class: "traceback", id: "traceback" }, tracebackBody(error)) : null,
  );
}
function outputsSection(outputs) {
  return section(
    "outputs-section",
    "Outputs",
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "data", id: "outputs" },
        h("thead", {}, h("tr", {}, ["Output", "Shape", "dtype", "Min", "Max", "Mean", "NaN / Inf"].map((t) => h("th", { scope: "col" }, t)))),
        h(
          "tbody",
          {},
          outputs.map((o) =>
            h(
              "tr",
              {},
              h("td", {}, o.name),
              h("td", { class: "mono" }, shape(o.shape)),
              h("td", { class: "mono" }, o.dtype),
              h("td", { class: "num mono" }, num(o.min)),
              h("td", { class: "num mono" }, num(o.max)),
              h("td", { class: "num mono" }, num(o.mean)),
              h("td", { class: "num mono" }, `${count(o.nan_count)} / ${count(o.inf_count)}`),
            ),
          ),
        ),
      ),
    ),
    outputs.filter((o) => o.preview).map((o) => h("pre", { class: "preview" }, `${o.name} = ${o.preview}`)),
  );
}

function stats(st) {
  if (!st) return "—";
  return `${seconds(st.median)} median of ${st.n} (min ${seconds(st.min)}, ± ${seconds(st.std)})`;
}

// A class run on a chip: its time on the class board, as the host measured it (sandbox/backends/rerun.py),
// or why there is none (the run then has no place on the board).
function hostTimingRow(host) {
  if (!host) return null;
  const text = isNum(host.seconds)
    ? `${seconds(host.seconds)} per call, ${host.note}`
    : `none, so no place on the board: ${host.note}`;
  return ["Class board time", text];
}

function timingSection(timing, chip, host) {
  const rows = [
    ["Kernel", stats(timing.kernel)],
    ["XLA reference", stats(timing.reference)],
    ["Kernel / reference", ratio(timing.ratio_to_reference)],
    ["First call (compile + run)", seconds(timing.first_call_seconds)],
    ["Compile (estimate)", seconds(timing.compile_seconds)],
  ];
  if (isNum(timing.device_seconds)) {
    rows.push(["On the device (profiler trace)", `${seconds(timing.device_seconds)}; host dispatch ${seconds(timing.host_dispatch_seconds ?? 0)} per call`]);
    if (isNum(timing.reference_device_seconds) && timing.reference_device_seconds > 0) {
      const ratio = timing.device_seconds / timing.reference_device_seconds;
      rows.push(["XLA reference on the device", `${seconds(timing.reference_device_seconds)}; the kernel takes ${ratio.toFixed(2)}× XLA's time`]);
    }
  }
  const hosted = hostTimingRow(host);
  if (hosted) rows.push(hosted);
  if (isNum(timing.roofline_seconds)) {
    rows.push([`Roofline bound on ${chip || "the chip"}`, `${seconds(timing.roofline_seconds)} (see Roofline below)`]);
  }
  const title = h(
    "span",
    {},
    "Timing",
    timing.simulated ? h("span", { class: "badge sim", id: "simulated" }, "CPU simulation") : null,
    h("span", { class: "badge reported", title: "Measured inside the process that ran the kernel's code: not part of the verdict." }, "reported by the kernel's process"),
  );
  return section(
    "timing-section",
    title,
    timing.case ? h("p", { class: "muted" }, `Measured on case ${timing.case}.`) : null,
    h("table", { class: "data kv", id: "timing" }, h("tbody", {}, rows.map(([k, v]) => h("tr", { dataset: { key: k } }, h("th", { scope: "row" }, k), h("td", { class: "mono" }, v))))),
    timing.note ? h("p", { class: "muted note" }, timing.note) : null,
  );
}

function memorySection(memory) {
  const hbmUsed = isNum(memory.hbm_input_bytes) && isNum(memory.hbm_output_bytes) ? memory.hbm_input_bytes + memory.hbm_output_bytes : null;
  const warnings = memory.warnings || [];
  return section(
    "memory-section",
    "Memory",
    h(
      "div",
      { class: "membars", id: "memory" },
      memoryBar("hbm", "HBM", hbmUsed, memory.hbm_capacity_bytes, `inputs ${bytes(memory.hbm_input_bytes)} + outputs ${bytes(memory.hbm_output_bytes)}`),
      memoryBar("vmem", "VMEM", memory.vmem_bytes, memory.vmem_capacity_bytes, "block buffers × buffering + scratch"),
      memoryBar("smem", "SMEM", memory.smem_bytes, memory.smem_capacity_bytes, isNum(memory.semaphores) ? `semaphores: ${memory.semaphores}` : ""),
    ),
    warnings.length ? h("ul", { class: "warnings" }, warnings.map((w) => h("li", {}, w))) : null,
    h("p", { class: "muted" }, `Peak host memory of the job: ${bytes(memory.peak_rss_bytes)}.`, memory.note ? ` ${memory.note}` : ""),
  );
}

function stream(name, text, truncated) {
  return h(
    "div",
    { class: "stream", id: `${name}-section` },
    h("h4", {}, name),
    h("pre", { id: name, class: "output" }, text),
    truncated ? h("p", { class: "truncated", dataset: { stream: name } }, `${name} was truncated: only the first part is kept.`) : null,
  );
}

function streamsSection(result) {
  const parts = [];
  if (result.stdout || result.stdout_truncated) parts.push(stream("stdout", result.stdout || "", result.stdout_truncated));
  if (result.stderr || result.stderr_truncated) parts.push(stream("stderr", result.stderr || "", result.stderr_truncated));
  return parts.length ? section("streams-section", "Output", parts) : null;
}

function extrasSection(result) {
  const extras = [];
  for (const [key, value] of Object.entries(result)) {
    if (!RESULT_FIELDS.includes(key) && value !== null && value !== undefined) extras.push([key, value]);
  }
  (result.cases || []).forEach((c) => {
    for (const [key, value] of Object.entries(c)) {
      if (!CASE_FIELDS.includes(key) && value !== null && value !== undefined) extras.push([`${c.name} · ${key}`, value]);
    }
  });
  if (!extras.length) return null;
  return section(
    "extras-section",
    "More details",
    extras.map(([key, value]) => {
      let text = typeof value === "string" ? value : JSON.stringify(value, null, 1);
      if (text.length > 20000) text = `${text.slice(0, 20000)}\n… (cut for display)`;
      return h("details", { class: "extra", dataset: { key } }, h("summary", {}, key), h("pre", { class: "output" }, text));
    }),
  );
}

function cachedNote(result, onRunFresh) {
  const at = isNum(result.cached_at) ? ` at ${new Date(result.cached_at * 1000).toLocaleTimeString()}` : "";
  return h(
    "p",
    { class: "cached muted", id: "cached" },
    `Served from the cache: the same job already ran${at}; its timings are from then. `,
    onRunFresh ? h("button", { type: "button", class: "link", id: "run-fresh", onclick: onRunFresh }, "Run it again for fresh timings") : null,
  );
}

function footer(result) {
  const v = result.versions || {};
  const bits = [
    v.jax ? `jax ${v.jax}` : null,
    v.jaxlib ? `jaxlib ${v.jaxlib}` : null,
    v.libtpu ? `libtpu ${v.libtpu}` : null,
    v.python ? `Python ${v.python}` : null,
    v.device_kind || null,
    isNum(result.wall_seconds) && result.wall_seconds > 0 ? `${seconds(result.wall_seconds)} wall` : null,
    v.interpret_fixes?.length ? `interpret-mode fixes: ${v.interpret_fixes.join(", ")}` : null,
    v.unavailable?.length ? `not on jax ${v.jax}: ${v.unavailable.map((u) => u.feature).join(", ")}` : null,
  ].filter(Boolean);
  return bits.length ? h("footer", { class: "run-meta muted", id: "run-meta" }, bits.join(" · ")) : null;
}

/**
 * Render `result` (a RunResult, or a partial one while a run is live) into `root`.
 * @param {{onGoToLine: (line: number) => void, chip?: string, chips?: object[], onCheckAllChips?: () => void}} ctx
 */
export function renderResult(root, result, ctx) {
  const cases = result.cases || [];
  root.replaceChildren(
    ...[
      statusLine(result),
      trustNote(result),
      sideBySide(result.both),
      result.cached_from ? cachedNote(result, ctx.onRunFresh) : null,
      result.limit ? h("p", { class: "limit", id: "limit" }, `Limit hit: ${result.limit}`) : null,
      result.error ? errorSection(result.error, ctx.onGoToLine) : null,
      cases.length ? casesSection(cases) : null,
      ctx.onOpenTrace ? traceSummary(result.trace, ctx.onOpenTrace) : null,
      mismatchSection(cases),
      racesSection(cases, ctx.onGoToLine),
      result.outputs?.length ? outputsSection(result.outputs) : null,
      streamsSection(result),
      errorMapsSection(cases),
      result.timing ? timingSection(result.timing, result.chip || ctx.chip, result.host_timing) : null,
      result.memory ? memorySection(result.memory) : null,
      estimateSection(result.estimate, ctx.chips?.find((c) => c.name === (result.chip || ctx.chip))?.title),
      rooflineSection(result.timing, ctx.chips, result.chip || ctx.chip, result.estimate),
      loweringSection(result, ctx),
      extrasSection(result),
      footer(result),
      phasesLine(result.phases),
    ].filter(Boolean),
  );
  root.dataset.status = result.status || "running";
}
