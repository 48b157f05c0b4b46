// The playground page: start-up, and the wiring between the editor, the catalog, the run settings,
// runs, results, shares and lessons. Talks to the server only through api.js (directly, or via run.js
// and share.js).

import { createEditor } from "../vendor/codemirror/codemirror.esm.min.js";
import * as api from "./api.js";
import { renderCatalog, renderEntryInfo } from "./catalog.js";
import { $, h } from "./dom.js";
import { LessonBuilder, LessonPlayer } from "./lesson.js";
import { renderIr } from "./lowering.js";
import { sourceMarks } from "./marks.js";
import { MatrixControl, matrixRequest } from "./matrix.js";
import { Notices, versionDrift } from "./notices.js";
import { carryPresentation, setupPresentation } from "./present.js";
import { Progress } from "./progress.js";
import { renderResult } from "./results.js";
import { RunControl, runRequest } from "./run.js";
import { RuntimePicker, showShareRuntime } from "./runtimes.js";
import { SCRATCH_STARTER } from "./scratch.js";
import { SharePanel } from "./share.js";
import { storage } from "./storage.js";
import { Toolbar } from "./toolbar.js";
import { renderTrace } from "./trace.js";
import { TunePanel } from "./tune.js";
import { setupTabs, setupTheme, showTab } from "./ui.js";

const DRAFT_PREFIX = "pp:draft:";
const IDLE_TEXT = "Press Run (Ctrl+Enter) to check your kernel.";

const state = {
  catalog: [],
  details: new Map(),
  entry: null, // the selected entry's detail; null in scratch mode
  server: null, // /api/version
  chips: [], // /api/chips: capacities and rates per chip
  shareMode: false,
  lesson: null, // a LessonPlayer on /l/{id}
};

// -- entries -------------------------------------------------------------------------------------

const draftKey = () => DRAFT_PREFIX + (state.entry?.slug ?? "(scratch)");
const template = () => state.entry?.template ?? SCRATCH_STARTER;

async function entryDetail(slug) {
  if (!state.details.has(slug)) state.details.set(slug, await api.getEntry(slug));
  return state.details.get(slug);
}

/** Switch to a catalog entry (or scratch mode for null), with `source` or the saved draft. */
async function selectEntry(slug, { source = null, fromShare = false } = {}) {
  let entry = null;
  if (slug) {
    try {
      entry = await entryDetail(slug);
    } catch (error) {
      notices.problem(error, `Could not open entry ${slug}`);
    }
  }
  state.entry = entry;
  state.shareMode = fromShare;
  renderEntryInfo(entry, reference);
  runtimes.showEntry(entry?.slug);
  tune.entryChanged(entry);
  toolbar.allowChips(entry ? entry.chips : toolbar.chips);
  // An entry's own options are its defaults (the race demo needs the detector); a share or a
  // lesson step brings its own right after this.
  if (!fromShare) toolbar.applyOptions(entry?.options ?? {});
  editor.setValue(source ?? storage.get(draftKey()) ?? template());
  clearResult();
  if (!fromShare) {
    const url = entry ? `/?entry=${encodeURIComponent(entry.slug)}` : "/?scratch";
    history.replaceState(null, "", carryPresentation(url));
  }
}

/** Load a kernel into the editor as one undoable step, and say so. */
function load(text, what, why = "") {
  editor.setValue(text);
  clearResult();
  const el = notices.show("info", `Loaded ${what}. Ctrl/⌘+Z in the editor undoes it.`, "load-notice");
  if (why) el.append(h("details", { class: "why" }, h("summary", {}, "Why is it wrong? (spoiler)"), h("p", {}, why)));
  editor.focus();
}

function wireEntryActions() {
  $("#reset").addEventListener("click", () => load(template(), state.entry ? "the template" : "the scratch starter"));
  $("#solution").addEventListener("click", () => state.entry && load(state.entry.solution, "the worked solution"));
  $("#wrong").addEventListener("change", (event) => {
    const wrong = state.entry?.wrong?.find((w) => w.name === event.target.value);
    event.target.value = "";
    if (wrong) load(wrong.source, `the wrong kernel "${wrong.name}" (expected: ${wrong.expect})`, wrong.why);
  });
}

function saveDraft(text) {
  if (state.lesson) return state.lesson.edited(text);
  if (state.shareMode) return;
  storage.set(draftKey(), text === template() ? null : text);
}

/** The editor's whole state, as a run, a share or a lesson step records it. */
const editorState = () => ({ source: editor.getValue(), entry: state.entry?.slug ?? null, chip: toolbar.chip, options: toolbar.options() });

// -- runs ----------------------------------------------------------------------------------------

function setRunning(running) {
  $("#run").disabled = running;
  $("#run-all").disabled = running;
  $("#cancel").disabled = !running;
  document.documentElement.dataset.running = running ? "1" : "0";
}

function clearResult() {
  matrices.clear();
  $("#result").replaceChildren();
  renderIr($("#ir"), {}, resultContext());
  renderTrace($("#trace"), {});
  delete $("#result").dataset.status;
  editor.clearMark();
  if (!runs.busy) progress.reset(IDLE_TEXT);
}

function expectedCases() {
  if (!state.entry) return 1;
  const native = state.server?.mode === "tpu";
  return state.entry.cases.filter((c) => native || !c.tpu_only).length;
}

const resultContext = () => ({
  onGoToLine: (line) => editor.goToLine(line),
  chip: toolbar.chip,
  chips: state.chips,
  onCheckAllChips: () => run({ lowerChips: toolbar.chips }),
  onOpenTrace: () => showTab("trace"),
  onRunFresh: () => run({ fresh: true }),
});

/** Run the editor's kernel; `extra`: {lowerChips, fresh}, as `runRequest` takes them. */
function run(extra = {}) {
  if (runs.busy || $("#run").disabled) return;
  clearResult();
  showTab("results");
  progress.start();
  runs.start(runRequest(editorState(), { ...extra, runtime: runtimes.runtime }));
}

/** Run the editor's kernel on every installed JAX version (or on `versions`, then diff the two). */
function runAll(versions = null) {
  if (runs.busy || matrices.busy || $("#run").disabled) return;
  clearResult();
  showTab("results");
  progress.reset(versions ? `Running on jax ${versions.join(" and ")}…` : "Running on every JAX version…");
  matrices.start(matrixRequest(editorState(), versions), { diff: versions });
}

const runHooks = {
  setRunning,
  event(kind, data, live) {
    progress.step(kind, data, expectedCases());
    if (kind === "case" && data.result) renderResult($("#result"), live, resultContext());
  },
  done(result) {
    progress.finish(result);
    renderResult($("#result"), result, resultContext());
    renderIr($("#ir"), result, resultContext());
    renderTrace($("#trace"), result);
    editor.markLines(sourceMarks(result));
  },
  failed: (reason) => progress.fail(reason),
};

function cancel() {
  if (runs.cancel()) $("#cancel").disabled = true;
}

// -- shares and lessons --------------------------------------------------------------------------

async function openShare(id) {
  let shared;
  try {
    shared = await api.getShare(id);
  } catch (error) {
    notices.problem(error, "This share link cannot be opened");
    return false;
  }
  const known = !shared.entry || state.catalog.some((e) => e.slug === shared.entry);
  if (!known) notices.show("warning", `This link was made for entry "${shared.entry}", which this server does not have; opened in scratch mode.`);
  await selectEntry(known ? shared.entry : null, { source: shared.source, fromShare: true });
  toolbar.chooseChip(shared.chip);
  toolbar.applyOptions(shared.options);
  const created = shared.created ? `, shared ${shared.created.slice(0, 10)}` : "";
  notices.show("info", `Opened shared link ${shared.id}${created} (${shared.entry ?? "scratch"} on ${shared.chip}).`, "share-notice");
  // A share runs on the JAX it was made on while that is installed: say so, and offer today's with a diff.
  runtimes.choose(shared.run_on);
  showShareRuntime(notices, shared, runtimes.newest, (older, newer) => runAll([older, newer]));
  return true;
}

async function loadStep(step, source) {
  const known = !step.entry || state.catalog.some((e) => e.slug === step.entry);
  await selectEntry(known ? step.entry : null, { source, fromShare: true });
  toolbar.chooseChip(step.chip);
  toolbar.applyOptions(step.options);
}

async function openLesson(id) {
  let lesson;
  try {
    lesson = await api.getLesson(id);
  } catch (error) {
    notices.problem(error, "This lesson link cannot be opened");
    return false;
  }
  state.lesson = new LessonPlayer($("#lesson-bar"), lesson, {
    load: loadStep,
    storage,
    onStep: (index) => history.replaceState(null, "", carryPresentation(`/l/${encodeURIComponent(id)}?step=${index + 1}`)),
  });
  const wanted = Number.parseInt(new URLSearchParams(location.search).get("step") ?? "1", 10);
  await state.lesson.go(Number.isFinite(wanted) ? wanted - 1 : 0);
  checkVersions(lesson.versions);
  return true;
}

function leaveLesson() {
  state.lesson = null;
  $("#lesson-bar").hidden = true;
  $("#lesson-bar").replaceChildren();
}

function checkVersions(versions) {
  const drift = versionDrift(versions, state.server);
  if (!drift) return;
  notices.show("warning", `This link was made on a server running ${drift.then}; this one runs ${drift.now}. Results may differ.`, "version-notice");
}

// -- start-up ------------------------------------------------------------------------------------

const notices = new Notices($("#notices"));
const toolbar = new Toolbar(storage);
const editor = createEditor($("#editor"), { onChange: saveDraft, onRun: () => run(), label: "Kernel source" });
const reference = createEditor($("#reference"), { readOnly: true, label: "Reference (read-only)" });
const progress = new Progress($("#progress"), $("#progress-label"), $("#run-log"));
const runs = new RunControl(notices, runHooks);
const sharePanel = new SharePanel($("#share-panel"), { current: () => ({ ...editorState(), runtime: runtimes.runtime }), notices });
const runtimes = new RuntimePicker($("#runtime"));
const matrices = new MatrixControl($("#matrix"), notices, { setRunning, done: (matrix) => progress.reset(matrix.verdict) });
const tune = new TunePanel($("#tune"), { current: editorState, entry: () => state.entry, chips: () => state.entry?.chips ?? toolbar.chips, load, notices });
window.playground = { editor, reference };

function wireControls() {
  $("#run").addEventListener("click", () => run());
  $("#cancel").addEventListener("click", cancel);
  $("#run-all").addEventListener("click", () => runAll());
  $("#share").addEventListener("click", () => sharePanel.share());
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.defaultPrevented) {
      event.preventDefault();
      run();
    }
  });
  // Alt+←/→ steps through a lesson, from anywhere (the editor included: captured before it).
  document.addEventListener(
    "keydown",
    (event) => {
      if (!state.lesson || !event.altKey || event.ctrlKey || event.metaKey || runs.busy) return;
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      event.stopPropagation();
      if (step > 0) state.lesson.next();
      else state.lesson.previous();
    },
    true,
  );
  const builder = new LessonBuilder($("#lesson-dialog"), { current: editorState, storage, onProblem: (error, what) => notices.problem(error, what) });
  $("#lesson-button").addEventListener("click", () => builder.open());
  $("#catalog-button").addEventListener("click", () => $("#catalog-dialog").showModal());
  $("#catalog-close").addEventListener("click", () => $("#catalog-dialog").close());
  $("#catalog-dialog").addEventListener("click", (event) => {
    if (event.target === event.currentTarget) event.currentTarget.close(); // a click on the backdrop
  });
}

async function start() {
  setupTheme($("#theme-toggle"), storage);
  setupPresentation($("#present"));
  setupTabs($(".tabs"));
  wireControls();
  wireEntryActions();
  try {
    [state.catalog, state.server, state.chips] = await Promise.all([api.getCatalog(), api.getVersion(), api.getChips()]);
    const [list, record] = await Promise.all([api.getRuntimes(), api.getCatalogRuntimes()]);
    runtimes.catalog = record;
    runtimes.build(list);
  } catch (error) {
    notices.problem(error, "The playground could not load");
  }
  toolbar.buildChips(state.chips);
  renderCatalog($("#catalog-list"), state.catalog, toolbar.chips, async (slug) => {
    $("#catalog-dialog").close();
    sharePanel.close();
    leaveLesson();
    await selectEntry(slug);
    toolbar.chooseChip(toolbar.preferredChip);
    editor.focus();
  });
  const shareId = /^\/s\/([^/]+)$/.exec(location.pathname)?.[1];
  const lessonId = /^\/l\/([^/]+)$/.exec(location.pathname)?.[1];
  let opened = false;
  if (shareId) opened = await openShare(decodeURIComponent(shareId));
  else if (lessonId) opened = await openLesson(decodeURIComponent(lessonId));
  if (!opened) {
    const params = new URLSearchParams(location.search);
    const wanted = params.has("scratch") ? null : params.get("entry") ?? state.catalog[0]?.slug ?? null;
    await selectEntry(state.catalog.some((e) => e.slug === wanted) ? wanted : null);
    toolbar.chooseChip(toolbar.preferredChip);
  }
  $("#run").disabled = false;
  $("#run-all").disabled = false;
  $("#share").disabled = false;
  document.documentElement.dataset.ready = "1";
  performance.mark("ready"); // bench/page_load.py reads it: time to an interactive editor
}

start().catch((error) => {
  notices.show("error", `The page failed to start: ${error.message}`);
  throw error;
});
