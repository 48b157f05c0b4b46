// The playground page: start-up, and the wiring between the editor, the catalog, the run settings,
// runs, results, the run history, shares and lessons (opening them, and Back / Forward between
// entries and lesson steps: places.js). Talks to the server only through api.js (directly, or via
// the modules that own a request).

import { createEditor } from "../vendor/codemirror/codemirror.esm.min.js";
import * as api from "./api.js";
import { renderCatalog, renderEntryInfo } from "./catalog.js";
import { DiffDialog } from "./diff.js";
import { $, h } from "./dom.js";
import { ExerciseActions } from "./exercise.js";
import { EmbedDialog } from "./links.js";
import { renderIr } from "./lowering.js";
import { sourceMarks } from "./marks.js";
import { MatrixControl, matrixRequest } from "./matrix.js";
import { Notices } from "./notices.js";
import { onDemand } from "./later.js";
import { Places } from "./places.js";
import { Progress } from "./progress.js";
import { renderResult } from "./results.js";
import { RunControl, runRequest } from "./run.js";
import { RuntimePicker, showShareRuntime } from "./runtimes.js";
import { runStatusText, showResultInView } from "./runstatus.js";
import { SCRATCH_STARTER } from "./scratch.js";
import { SharePanel } from "./share.js";
import { setupShortcuts } from "./shortcuts.js";
import { storage } from "./storage.js";
import { Toolbar } from "./toolbar.js";
import { setupTabs, setupTheme, showTab } from "./ui.js";
import { View } from "./view.js";

const DRAFT_PREFIX = "pp:draft:";
const IDLE_TEXT = "Press Run (Ctrl+Enter) to check your kernel.";

const state = {
  catalog: [],
  details: new Map(),
  entry: null, // the selected entry's detail; null in scratch mode
  server: null, // /api/version
  chips: [], // /api/chips: capacities and rates per chip
  shareMode: false,
  result: null, // the result shown now (a run's, a share's, a history record's)
  runId: null, // the run under way
  lastRun: null, // {key, id}: the last finished run and the editor state it ran
};

// -- entries -------------------------------------------------------------------------------------

const draftKey = () => DRAFT_PREFIX + (state.entry?.slug ?? "(scratch)");
const template = () => state.entry?.template ?? SCRATCH_STARTER;
const stateKey = (s) => JSON.stringify([s.source, s.entry, s.chip, s.options]);

async function entryDetail(slug) {
  if (!state.details.has(slug)) state.details.set(slug, await api.getEntry(slug));
  return state.details.get(slug);
}

/** Switch to a catalog entry (or scratch mode for null), with `source` or the saved draft. */
async function selectEntry(slug, { source = null, fromShare = false } = {}) {
  notices.leavePlace();
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
  tune.made?.then((panel) => panel.entryChanged(entry));
  toolbar.allowChips(entry ? entry.chips : toolbar.chips);
  // An entry's own options are its defaults (the race demo needs the detector); a share or a
  // lesson step brings its own right after this.
  if (!fromShare) toolbar.applyOptions(entry?.options ?? {});
  editor.setValue(source ?? storage.get(draftKey()) ?? template());
  clearResult();
}

function saveDraft(text) {
  if (places.lesson) return places.lesson.edited(text);
  if (state.shareMode) return;
  storage.set(draftKey(), text === template() ? null : text);
}

/** The editor's whole state, as a run, a share or a lesson step records it. */
const editorState = () => ({ source: editor.getValue(), entry: state.entry?.slug ?? null, chip: toolbar.chip, options: toolbar.options() });

/** Put a state ({source, entry, chip, options}) in the editor and the toolbar. */
async function openState(saved, { fromShare = true } = {}) {
  const known = !saved.entry || state.catalog.some((e) => e.slug === saved.entry);
  await selectEntry(known ? saved.entry : null, { source: saved.source, fromShare });
  if (!known) notices.show("warning", `This was made for entry "${saved.entry}", which this server does not have; opened in scratch mode.`, null, { place: true });
  toolbar.chooseChip(saved.chip);
  toolbar.applyOptions(saved.options);
}

// -- runs ----------------------------------------------------------------------------------------

function setRunning(running) {
  $("#run").disabled = running;
  $("#run-all").disabled = running;
  $("#cancel").disabled = !running;
  document.documentElement.dataset.running = running ? "1" : "0";
}

function clearResult() {
  state.result = null;
  matrices.clear();
  $("#result").replaceChildren();
  renderIr($("#ir"), {}, resultContext());
  showTrace({});
  delete $("#result").dataset.status;
  editor.clearMark();
  if (!runs.busy) {
    progress.reset(IDLE_TEXT);
    runStatus("idle", "");
  }
}

function expectedCases() {
  if (!state.entry) return 1;
  const native = state.server?.mode === "tpu";
  return state.entry.cases.filter((c) => native || !c.tpu_only).length;
}

// The Trace tab's module (its timeline and grid views) is imported when there is a trace to show
// or the tab is first opened: not with the page.
const traceTab = onDemand(() => import("./trace.js"));
// The class session's part of a lesson (classroom.js), loaded with the first lesson (places.js).
let classroom = null;
let traced = {};
function showTrace(result) {
  traced = result;
  if (traceTab.made || result?.trace || !$("#panel-trace").hidden) {
    traceTab.get().then((m) => m.renderTrace($("#trace"), traced), (error) => notices.problem(error, "Could not load the trace view"));
  }
}

const resultContext = () => ({
  onGoToLine: (line) => editor.goToLine(line),
  chip: toolbar.chip,
  chips: state.chips,
  onCheckAllChips: () => run({ lowerChips: toolbar.chips }),
  onOpenTrace: () => showTab("trace"),
  onRunFresh: () => run({ fresh: true }),
});

/** Show a finished result everywhere it belongs; `note`: where it comes from, when not a live run. */
function showResult(result, note = null) {
  state.result = result;
  renderResult($("#result"), result, resultContext());
  if (note) $("#result").prepend(h("p", { class: "snapshot-note", id: "snapshot-note" }, note));
  renderIr($("#ir"), result, resultContext());
  showTrace(result);
  editor.markLines(sourceMarks(result));
}

function runStatus(phase, text) {
  const el = $("#run-status");
  el.dataset.phase = phase;
  el.textContent = text;
}

/** Run the editor's kernel; `extra`: {lowerChips, fresh}, as `runRequest` takes them. */
function run(extra = {}) {
  if (runs.busy || $("#run").disabled) return;
  clearResult();
  showTab("results");
  progress.start();
  runStatus("running", "Submitting…");
  state.running = editorState();
  classroom?.checkChallengeChip(places.lesson, state.running.chip, notices, (chip) => {
    toolbar.chooseChip(chip);
    run(extra);
  });
  const both = state.server?.mode === "tpu" && $("#run-both").checked;
  const body = runRequest(state.running, { ...extra, runtime: runtimes.runtime, both });
  runs.start(classroom ? classroom.withClass(body, places.lesson) : body);
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
    state.runId = runs.runId ?? state.runId;
    progress.step(kind, data, expectedCases());
    runStatus("running", runStatusText(kind, data, expectedCases()));
    if (kind === "case" && data.result) renderResult($("#result"), live, resultContext());
  },
  done(result) {
    progress.finish(result);
    runStatus(result.status, runStatusText("done", result));
    showResult(result);
    // A cached run sends `done` alone, so its id comes from the submit, not from an event.
    state.runId = state.runId ?? runs.lastId;
    const [ran, runId] = [state.running, state.runId];
    runHistory.get().then((kept) => kept.add(ran, result, runId));
    state.lastRun = { key: stateKey(state.running), id: state.runId };
    state.runId = null;
    places.rememberResult(result);
    showResultInView($("#panel-results"));
  },
  failed: (reason) => {
    progress.fail(reason);
    runStatus("failed", reason);
  },
};

// -- start-up ------------------------------------------------------------------------------------

const notices = new Notices($("#notices"));
const toolbar = new Toolbar(storage);
const editor = createEditor($("#editor"), { onChange: saveDraft, onRun: () => run(), label: "Kernel source" });
const reference = createEditor($("#reference"), { readOnly: true, label: "Reference (read-only)" });
const progress = new Progress($("#progress"), $("#progress-label"), $("#run-log"));
const runs = new RunControl(notices, runHooks);
const view = new View({ storage, editors: () => [editor, reference] });
const embedDialog = new EmbedDialog($("#embed-dialog"));
const runtimes = new RuntimePicker($("#runtime"));
const matrices = new MatrixControl($("#matrix"), notices, { setRunning, done: (matrix) => progress.reset(matrix.verdict) });
const sharePanel = new SharePanel($("#share-panel"), {
  current: () => ({ ...editorState(), runtime: runtimes.runtime }),
  notices,
  lastRun: (s) => (state.lastRun?.key === stateKey(s) ? state.lastRun.id : null),
  onEmbed: (target) => embedDialog.open(target),
});
const tune = onDemand(async () => {
  const { TunePanel } = await import("./tune.js");
  const panel = new TunePanel($("#tune"), { current: editorState, entry: () => state.entry, chips: () => state.entry?.chips ?? toolbar.chips, load: (text, what) => exercise.load(text, what), notices });
  panel.entryChanged(state.entry);
  return panel;
});
const builder = onDemand(async () => new (await import("./builder.js")).LessonBuilder($("#lesson-dialog"), {
  current: editorState, storage, onProblem: (error, what) => notices.problem(error, what), onEmbed: (target) => embedDialog.open(target),
}));
const openBuilder = (then) => builder.get().then(then, (error) => notices.problem(error, "Could not load the lesson builder"));
const diff = new DiffDialog($("#diff-dialog"), { current: () => editor.getValue(), entry: () => state.entry, wrap: () => view.wrap, starter: SCRATCH_STARTER });
// The History tab's module: with the first result or the tab's first showing, not with the page.
const runHistory = onDemand(async () => new (await import("./history.js")).RunHistory($("#history"), {
  storage,
  onOpen: async (record) => {
    await places.visit(() => openState(record, { fromShare: false }), record.entry ? `/?entry=${encodeURIComponent(record.entry)}` : "/?scratch");
    showResult(record.result, `From your run history: ${new Date(record.at).toLocaleString()}. Run it to check it again.`);
    showTab("results");
  },
}));
// A share's measurements (measured.js): with the first share opened, not with the page.
const shareMeasured = onDemand(async () => new (await import("./measured.js")).ShareMeasurements($("#share-measured"), { api, notices }));
const measured = { show: (id) => shareMeasured.get().then((m) => m.show(id)), hide: () => shareMeasured.made?.then((m) => m.hide()) };
const places = new Places({ api, notices, storage, view, builder: { edit: (lesson) => openBuilder((b) => b.edit(lesson)) }, selectEntry, openState, showResult, catalog: () => state.catalog, server: () => state.server, toolbar, editor, measured,
  loadClass: async () => { classroom ??= await import("./classroom.js"); },
  classPart: (player) => classroom.classPart(player, notices),
  classEdited: (player) => classroom?.classEdited(player),
  onShare: (shared) => {
    runtimes.choose(shared.run_on);
    showShareRuntime(notices, shared, runtimes.newest, (older, newer) => runAll([older, newer]));
  },
});
const exercise = new ExerciseActions({ editor, notices, storage, entry: () => state.entry, template, onLoaded: clearResult, diff });
window.playground = { editor, reference };

function wireControls() {
  $("#run").addEventListener("click", () => run());
  $("#settings-button").addEventListener("click", (event) => {
    const open = document.documentElement.dataset.settings !== "open";
    document.documentElement.dataset.settings = open ? "open" : "";
    event.currentTarget.setAttribute("aria-expanded", String(open));
  });
  $("#cancel").addEventListener("click", () => runs.cancel() && ($("#cancel").disabled = true));
  $("#run-all").addEventListener("click", () => runAll());
  $("#share").addEventListener("click", () => sharePanel.share());
  $("#run-status").addEventListener("click", () => state.result && showResultInView($("#panel-results"), true));
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
      const lesson = places.lesson;
      if (!lesson || !event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || runs.busy || $("#lesson-dialog").open) return;
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      event.stopPropagation();
      if (step > 0) lesson.next();
      else lesson.previous();
    },
    true,
  );
  $("#lesson-button").addEventListener("click", () => openBuilder((b) => b.open()));
  $("#panel-trace").addEventListener("shown", () => showTrace(traced));
  $("#panel-history").addEventListener("shown", () => runHistory.get().catch((error) => notices.problem(error, "Could not load the history")));
  $("#panel-tune").addEventListener("shown", () => tune.get().catch((error) => notices.problem(error, "Could not load Tune")));
  $("#catalog-button").addEventListener("click", () => $("#catalog-dialog").showModal());
  $("#catalog-close").addEventListener("click", () => $("#catalog-dialog").close());
  $("#catalog-dialog").addEventListener("click", (event) => {
    if (event.target === event.currentTarget) event.currentTarget.close(); // a click on the backdrop
  });
  setupShortcuts($("#shortcuts-dialog"), $("#shortcuts-button"));
}

async function start() {
  setupTheme($("#theme-toggle"), storage);
  setupTabs($(".tabs"));
  wireControls();
  try {
    [state.catalog, state.server, state.chips] = await Promise.all([api.getCatalog(), api.getVersion(), api.getChips()]);
    const [list, record] = await Promise.all([api.getRuntimes(), api.getCatalogRuntimes()]);
    runtimes.catalog = record;
    runtimes.build(list);
  } catch (error) {
    notices.problem(error, "The playground could not load");
  }
  toolbar.buildChips(state.chips);
  $("#run-both-label").hidden = state.server?.mode !== "tpu"; // a TPU server only: the chip and the simulator
  renderCatalog($("#catalog-list"), state.catalog, toolbar.chips, async (slug) => {
    $("#catalog-dialog").close();
    sharePanel.close();
    await places.visit(() => selectEntry(slug), slug ? `/?entry=${encodeURIComponent(slug)}` : "/?scratch");
    toolbar.chooseChip(toolbar.preferredChip);
    editor.focus();
  });
  await places.openFromLocation();
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
