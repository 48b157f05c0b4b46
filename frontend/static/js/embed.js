// The embed page (/embed/{id}): one shared kernel in an editor, a Run button and a compact result,
// for a frame in a course page; /embed/l/{id} does the same for a lesson, step by step with its
// notes (always the lesson's latest revision). `?readonly=1` makes the editor read-only. Runs go through run.js,
// as on the playground; talks to the server only through api.js. Sets html[data-ready="1"] once
// it has started (or failed to, with a notice).

import { createEditor } from "../vendor/codemirror/codemirror.esm.min.js";
import * as api from "./api.js";
import { $, h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { sourceMarks } from "./marks.js";
import { Notices, versionDrift } from "./notices.js";
import { renderResult } from "./results.js";
import { liveResult, RunControl, runRequest } from "./run.js";

// The parts of a rendered result a compact widget keeps; the playground ("Open in") has the rest.
const KEEP = new Set(["error-section", "cases-section", "races-section", "streams-section"]);

const readOnly = new URLSearchParams(location.search).get("readonly") === "1";
// `share`: what a run runs ({source, entry, chip, options}): the share, or the lesson's current step.
const state = { share: null, editor: null, summary: "", lesson: null, step: 0 };
const notices = new Notices($("#notices"), { single: true });

/** What the frame shows: {kind: "share" | "lesson", id}. */
function target() {
  const [, lesson, raw = ""] = /^\/embed\/(l\/)?([^/]+)$/.exec(location.pathname) ?? [];
  let id = raw;
  try {
    id = decodeURIComponent(raw);
  } catch {
    /* kept as it came */
  }
  return { kind: lesson ? "lesson" : "share", id };
}

function checkVersions(versions, server) {
  const drift = versionDrift(versions, server);
  if (drift) notices.show("warning", `Shared from a server running ${drift.then}; this one runs ${drift.now}. Results may differ.`);
}

// -- runs ----------------------------------------------------------------------------------------

/** The widget's one-line progress: fewer steps than the playground's log, in the summary's place. */
function phase(kind, data) {
  switch (kind) {
    case "queued":
      return `Queued: position ${data.position} of ${data.queued}`;
    case "running":
    case "started":
      return "Starting…";
    case "compiled":
      return "Compiled; checking cases…";
    case "timing":
    case "memory":
      return "Checked; finishing…";
    default:
      return null;
  }
}

function show(result) {
  const root = $("#result");
  renderResult(root, result, { onGoToLine: (line) => state.editor.goToLine(line), chip: state.share?.chip });
  for (const section of root.querySelectorAll(".result-section")) if (!KEEP.has(section.id)) section.remove();
  root.querySelector("#run-meta")?.remove();
}

function setRunning(running) {
  $("#run").disabled = running || !state.share;
  document.documentElement.dataset.running = running ? "1" : "0";
}

const runs = new RunControl(notices, {
  setRunning,
  event(kind, data, live) {
    state.summary = phase(kind, data) ?? state.summary;
    show({ ...live, summary: state.summary });
  },
  done(result) {
    show(result);
    state.editor.markLines(sourceMarks(result));
  },
  // No result will come: the notice says why, and the progress shown so far would only mislead.
  failed: () => $("#result").replaceChildren(),
});

function run() {
  if (!state.share || runs.busy) return;
  state.editor.clearMark();
  state.summary = "Submitting…";
  show(liveResult([], state.summary));
  const { source, entry, chip, options } = { ...state.share, source: state.editor.getValue() };
  runs.start(runRequest({ source, entry, chip, options }));
}

// -- start-up ------------------------------------------------------------------------------------

// -- a lesson, step by step ---------------------------------------------------------------------

function showStep(index) {
  const steps = state.lesson.steps;
  state.step = Math.max(0, Math.min(steps.length - 1, index));
  const step = steps[state.step];
  state.share = step;
  state.editor.setValue(step.source);
  state.editor.clearMark();
  $("#result").replaceChildren();
  $("#embed-title").textContent = `${state.lesson.title} · ${step.entry ?? "scratch"} · ${step.chip}`;
  $("#embed-steps").replaceChildren(
    h("button", { type: "button", id: "step-prev", disabled: state.step === 0, onclick: () => showStep(state.step - 1) }, "←"),
    h("span", { id: "step-position", dataset: { step: state.step + 1, of: steps.length } }, `Step ${state.step + 1} of ${steps.length}`),
    h("button", { type: "button", id: "step-next", disabled: state.step === steps.length - 1, onclick: () => showStep(state.step + 1) }, "→"),
  );
  $("#embed-note").replaceChildren(step.note ? renderMarkdown(step.note) : "");
  $("#open-in-playground").href = `/l/${encodeURIComponent(state.lesson.id)}?step=${state.step + 1}`;
}

// -- start-up ------------------------------------------------------------------------------------

async function load({ kind, id }) {
  const [found, server] = await Promise.all([kind === "lesson" ? api.getLesson(id) : api.getShare(id), api.getVersion().catch(() => null)]);
  return { found, server };
}

async function start() {
  const where = target();
  $("#open-in-playground").href = where.kind === "lesson" ? `/l/${encodeURIComponent(where.id)}` : `/s/${encodeURIComponent(where.id)}`;
  let found = null;
  let server = null;
  try {
    ({ found, server } = await load(where));
  } catch (error) {
    const what = where.kind === "lesson" ? "lesson" : "shared kernel";
    notices.problem(error, `This ${what} cannot be opened`);
    $("#embed-title").textContent = error.status === 404 ? `${what[0].toUpperCase()}${what.slice(1)} not found` : `${what} not loaded`;
  }
  const label = readOnly ? "Kernel source (read-only)" : "Kernel source";
  state.editor = createEditor($("#editor"), { doc: where.kind === "share" ? found?.source ?? "" : "", onRun: run, readOnly, label });
  window.embed = { editor: state.editor };
  document.documentElement.dataset.readonly = readOnly ? "1" : "0";
  if (!found) return;
  if (where.kind === "lesson") {
    state.lesson = found;
    document.body.classList.add("embed-lesson");
    showStep(0);
  } else {
    state.share = found;
    $("#embed-title").textContent = `${found.entry ?? "scratch"} · ${found.chip}`;
  }
  checkVersions(found.versions, server);
  $("#run").addEventListener("click", run);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.defaultPrevented) {
      event.preventDefault();
      run();
    }
  });
  setRunning(false);
}

start()
  .catch((error) => {
    notices.show("error", `The widget failed to start: ${error.message}`);
    throw error;
  })
  .finally(() => {
    document.documentElement.dataset.ready = "1";
  });
