// The embed page (/embed/{id}): one shared kernel in an editor, a Run button and a compact result,
// for a frame in a course page. `?readonly=1` makes the editor read-only. Runs go through run.js,
// as on the playground; talks to the server only through api.js. Sets html[data-ready="1"] once
// it has started (or failed to, with a notice).

import { createEditor } from "../vendor/codemirror/codemirror.esm.min.js";
import * as api from "./api.js";
import { $ } from "./dom.js";
import { sourceMarks } from "./marks.js";
import { Notices, versionDrift } from "./notices.js";
import { renderResult } from "./results.js";
import { liveResult, RunControl, runRequest } from "./run.js";

// The parts of a rendered result a compact widget keeps; the playground ("Open in") has the rest.
const KEEP = new Set(["error-section", "cases-section", "races-section", "streams-section"]);

const readOnly = new URLSearchParams(location.search).get("readonly") === "1";
const state = { share: null, editor: null, summary: "" };
const notices = new Notices($("#notices"), { single: true });

function shareId() {
  const raw = /^\/embed\/([^/]+)$/.exec(location.pathname)?.[1] ?? "";
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
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
  runs.start(runRequest({ ...state.share, source: state.editor.getValue() }));
}

// -- start-up ------------------------------------------------------------------------------------

async function start() {
  const id = shareId();
  $("#open-in-playground").href = `/s/${encodeURIComponent(id)}`;
  let server = null;
  try {
    [state.share, server] = await Promise.all([api.getShare(id), api.getVersion().catch(() => null)]);
  } catch (error) {
    notices.problem(error, "This shared kernel cannot be opened");
    $("#embed-title").textContent = error.status === 404 ? "Shared kernel not found" : "Shared kernel not loaded";
  }
  const label = readOnly ? "Kernel source (read-only)" : "Kernel source";
  state.editor = createEditor($("#editor"), { doc: state.share?.source ?? "", onRun: run, readOnly, label });
  window.embed = { editor: state.editor };
  document.documentElement.dataset.readonly = readOnly ? "1" : "0";
  if (!state.share) return;
  $("#embed-title").textContent = `${state.share.entry ?? "scratch"} · ${state.share.chip}`;
  checkVersions(state.share.versions, server);
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
