// The embed page (/embed/{id}): one shared kernel in an editor, a Run button and a compact result,
// for a frame in a course page. `?readonly=1` makes the editor read-only. Talks to the server only
// through api.js; sets html[data-ready="1"] once it has started (or failed to, with a notice).

import { createEditor } from "../vendor/codemirror/codemirror.esm.min.js";
import * as api from "./api.js";
import { $ } from "./dom.js";
import { renderResult } from "./results.js";

// The parts of a rendered result a compact widget keeps; the playground ("Open in") has the rest.
const KEEP = new Set(["error-section", "cases-section", "races-section", "streams-section"]);

const readOnly = new URLSearchParams(location.search).get("readonly") === "1";
const state = { share: null, editor: null, follower: null, live: null };

function shareId() {
  const raw = /^\/embed\/([^/]+)$/.exec(location.pathname)?.[1] ?? "";
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

// -- notice --------------------------------------------------------------------------------------

function notice(kind, text) {
  const el = $("#notice");
  el.dataset.kind = kind;
  el.setAttribute("role", kind === "error" ? "alert" : "status");
  el.textContent = text;
  el.hidden = false;
}

function showProblem(error, what) {
  const retry = error.retryAfter ? ` (try again in ${error.retryAfter} s)` : "";
  notice("error", `${what}: ${error.title}: ${error.detail}${retry}`);
}

function checkVersions(versions, server) {
  const differ = ["jax", "jaxlib"].filter((k) => versions?.[k] && server?.[k] && versions[k] !== server[k]);
  if (!differ.length) return;
  const then = differ.map((k) => `${k} ${versions[k]}`).join(", ");
  const now = differ.map((k) => `${k} ${server[k]}`).join(", ");
  notice("warning", `Shared from a server running ${then}; this one runs ${now}. Results may differ.`);
}

// -- runs ----------------------------------------------------------------------------------------

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

async function run() {
  if (!state.share || state.follower || $("#run").disabled) return;
  const { entry, chip, options } = state.share;
  if ($("#notice").dataset.kind === "error") $("#notice").hidden = true;
  state.editor.clearMark();
  setRunning(true);
  state.live = { status: "running", summary: "Submitting…", cases: [] };
  show(state.live);
  let created;
  try {
    created = await api.createRun({ source: state.editor.getValue(), entry, chip, mode: "auto", options });
  } catch (error) {
    setRunning(false);
    $("#result").replaceChildren();
    showProblem(error, "The run was refused");
    return;
  }
  state.follower = api.followRun(created, onRunEvent);
}

function onRunEvent(kind, data) {
  if (kind === "done") return finish(data);
  if (kind === "lost") {
    state.follower = null;
    setRunning(false);
    notice("error", `Lost track of the run: ${data.message}`);
    return;
  }
  if (kind === "case" && data.result) {
    state.live.cases[data.index ?? state.live.cases.length] = data.result;
    state.live.cases = state.live.cases.filter(Boolean);
  }
  state.live.summary = phase(kind, data) ?? state.live.summary;
  show(state.live);
}

function finish(result) {
  state.follower = null;
  setRunning(false);
  show(result);
  const marked = $("#result .goto-line");
  if (marked) state.editor.markLine(Number(marked.dataset.line), result.error?.message ?? "");
}

// -- start-up ------------------------------------------------------------------------------------

async function start() {
  const id = shareId();
  $("#open-in-playground").href = `/s/${encodeURIComponent(id)}`;
  let server = null;
  try {
    [state.share, server] = await Promise.all([api.getShare(id), api.getVersion().catch(() => null)]);
  } catch (error) {
    showProblem(error, "This shared kernel cannot be opened");
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
    notice("error", `The widget failed to start: ${error.message}`);
    throw error;
  })
  .finally(() => {
    document.documentElement.dataset.ready = "1";
  });
