// Renders a RunResult (see sandbox/protocol.py) as DOM. Every string from a run is text, never
// markup. Fields may be missing or new (other parts of the playground grow the result): absent
// ones are skipped, unknown ones are shown as JSON text under "More details".

import { errorMap, memoryBar } from "./charts.js";
import { loweringSection } from "./lowering.js";
import { rooflineSection } from "./roofline.js";
import { traceSummary } from "./trace.js";
import { h } from "./dom.js";
import { bytes, count, isNum, num, percent, ratio, seconds, shape } from "./format.js";

const USER_FILE = "kernel.py";
const STATUS_TEXT = {
  passed: "passed",
  mismatch: "mismatch",
  error: "error",
  timeout: "timeout",
  resource_limit: "resource limit",
  ran: "ran",
  cancelled: "cancelled",
  running: "running",
};
const KNOWN_RESULT = new Set([
  "status", "summary", "chip", "mode", "options", "cases", "outputs", "error", "timing", "memory",
  "stdout", "stderr", "stdout_truncated", "stderr_truncated", "versions", "limit", "wall_seconds",
  "cached_from", "cached_at", "lowering", "lowerings", "chip_warnings", "trace",
]);
const KNOWN_CASE = new Set(["name", "dtype", "dims", "input_shapes", "tolerance", "passed", "outputs", "seconds", "note", "races"]);

/** The line of the user's file an error points at (the innermost frame in kernel.py), or null. */
export function userLine(error) {
  if (!error) return null;
  const frames = [...String(error.traceback || "").matchAll(/File "([^"]+)", line (\d+)/g)];
  const mine = frames.filter((f) => f[1] === USER_FILE);
  if (mine.length) return Number(mine[mine.length - 1][2]);
  return frames.length ? null : (error.line ?? null);
}

/** The lines of the user's file a result points at: where it raised, where accesses raced. */
export function sourceMarks(result) {
  const marks = [];
  const line = userLine(result.error);
  if (line) marks.push({ line, kind: "error", message: `${result.error.type}: ${result.error.message}` });
  if (result.lowering?.lowers === false && result.lowering.error?.line) {
    const e = result.lowering.error;
    marks.push({ line: e.line, kind: "error", message: `rejected by the TPU compiler: ${e.message}` });
  }
  for (const c of result.cases || []) {
    for (const race of c.races || []) {
      for (const a of race.accesses || []) {
        if (a.file === USER_FILE && a.line) marks.push({ line: a.line, kind: "race", message: `data race: ${a.kind} of ${a.buffer} ${a.region} by ${a.by}` });
      }
    }
  }
  return marks;
}

function section(id, title, ...body) {
  return h("section", { id, class: "result-section" }, h("h3", {}, title), ...body);
}

function statusLine(result) {
  const status = result.status || "running";
  return h(
    "div",
    { class: "status-line" },
    h("span", { id: "status", class: "badge", dataset: { status } }, STATUS_TEXT[status] || status),
    h("span", { id: "summary", class: "summary" }, result.summary || ""),
  );
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
      h("strong", { class: "error-type" }, error.type || "Error"),
      `${where}: `,
      h("span", { class: "error-message" }, error.message || ""),
      line
        ? h("button", { type: "button", class: "link goto-line", dataset: { line }, onclick: () => onGoToLine(line) }, `line ${line}`)
        : null,
    ),
    error.traceback ? h("pre", { class: "traceback", id: "traceback" }, error.traceback) : null,
  );
}

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

function casesSection(cases) {
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
          h("td", { class: "mono tol" }, tolerance(c.tolerance)),
          h("td", { class: "num mono", title: o ? `${count(o.mismatch_count)} of ${count(o.total)} elements` : null }, o ? mismatches(o) : "—"),
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

function mismatchSection(cases) {
  const failed = [];
  for (const c of cases) for (const o of c.outputs || []) if (o.passed === false) failed.push(mismatchDetails(c, o));
  return failed.length ? section("mismatch-section", "Mismatches", h("div", { class: "mismatch-grid" }, failed)) : null;
}

function access(a, onGoToLine) {
  const where = a.file === USER_FILE && a.line ? h("button", { type: "button", class: "link goto-line", dataset: { line: a.line }, onclick: () => onGoToLine(a.line) }, `line ${a.line}`) : null;
  return h("li", { class: "race-access", dataset: { kind: a.kind } }, `${a.kind} of ${a.buffer} ${a.region} by ${a.by}`, a.function ? ` in ${a.function}` : "", where ? " at " : "", where);
}

function racesSection(cases, onGoToLine) {
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

function errorMapsSection(cases) {
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

function timingSection(timing, chip) {
  const rows = [
    ["Kernel", stats(timing.kernel)],
    ["XLA reference", stats(timing.reference)],
    ["Kernel / reference", ratio(timing.ratio_to_reference)],
    ["First call (compile + run)", seconds(timing.first_call_seconds)],
    ["Compile (estimate)", seconds(timing.compile_seconds)],
  ];
  if (isNum(timing.roofline_seconds)) {
    rows.push([`Roofline bound on ${chip || "the chip"}`, `${seconds(timing.roofline_seconds)} (see Roofline below)`]);
  }
  const title = h("span", {}, "Timing", timing.simulated ? h("span", { class: "badge sim", id: "simulated" }, "CPU simulation") : null);
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
    if (!KNOWN_RESULT.has(key) && value !== null && value !== undefined) extras.push([key, value]);
  }
  (result.cases || []).forEach((c) => {
    for (const [key, value] of Object.entries(c)) {
      if (!KNOWN_CASE.has(key) && value !== null && value !== undefined) extras.push([`${c.name} · ${key}`, value]);
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
    `Served from the cache: the same job already ran${at} (run ${result.cached_from}); its timings are from then. `,
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
      result.timing ? timingSection(result.timing, result.chip || ctx.chip) : null,
      result.memory ? memorySection(result.memory) : null,
      rooflineSection(result.timing, ctx.chips, result.chip || ctx.chip),
      loweringSection(result, ctx),
      extrasSection(result),
      footer(result),
    ].filter(Boolean),
  );
  root.dataset.status = result.status || "running";
}
