// The class pages. /c/{code}: a student types a nickname and joins (the student token is kept in
// this browser, classroom.js), then goes to the lesson. /t/{id}#token=…: the teacher's grid of
// students × steps, read every second (GET /api/classes/{id}/progress), the room's most common
// failing headlines, and the grid as CSV. The teacher token leaves the fragment for this browser's
// storage at once, so it is not left in the address bar on a projector.

import * as api from "./api.js";
import { fill, h, $ } from "./dom.js";
import { keepMembership, teacherKey } from "./classroom.js";
import { storage } from "./storage.js";

const POLL_MS = 1000;
const LABELS = { none: "not started", queued: "queued", running: "running", passed: "passed", mismatch: "mismatch", error: "error", timeout: "timeout", resource_limit: "over a limit", ran: "ran", cancelled: "cancelled", lost: "lost" };

function showProblem(el, error) {
  el.textContent = error.message;
  el.hidden = false;
}

// -- the student's join form ---------------------------------------------------------------------

function joinPage(code) {
  $("#class-code").textContent = `Class ${code}`;
  $("#join").hidden = false;
  $("#join-name").focus();
  $("#join-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("#join-button").disabled = true;
    try {
      const joined = await api.joinClass(code, $("#join-name").value.trim());
      keepMembership(joined, code.toUpperCase());
      location.assign(joined.lesson_url);
    } catch (error) {
      $("#join-button").disabled = false;
      showProblem($("#join-problem"), error);
    }
  });
}

// -- the teacher's grid --------------------------------------------------------------------------

/** The teacher token: from the link's fragment (then kept here and dropped from the address), or kept. */
function teacherToken(id) {
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromLink) {
    storage.set(teacherKey(id), fromLink);
    history.replaceState(null, "", location.pathname);
  }
  return fromLink || storage.get(teacherKey(id));
}

function cell(student, step) {
  const found = student.steps[String(step)];
  const status = found?.status ?? "none";
  return h("td", { dataset: { status, step }, title: found?.headline || null }, LABELS[status] ?? status);
}

function renderGrid(progress, onRemove) {
  const steps = Array.from({ length: progress.steps }, (_, i) => i + 1);
  fill($("#teacher-grid"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Student"), steps.map((k) => h("th", { scope: "col" }, `Step ${k}`)))),
    h("tbody", {}, progress.students.map((student) =>
      h("tr", { dataset: { student: student.id } }, h("th", { scope: "row" }, student.name), steps.map((k) => cell(student, k)),
        h("td", {}, h("button", { type: "button", class: "remove-student", title: `Remove ${student.name}: their token stops working`, onclick: () => onRemove(student) }, "Remove"))))),
  );
  const common = progress.common_errors.map((e) =>
    h("li", {}, h("span", { class: "count" }, `${e.students.length} students`), ` on step ${e.step}: ${e.headline}`, h("span", { class: "muted" }, ` (${e.students.join(", ")})`)));
  fill($("#teacher-common"), common.length ? common : h("li", { class: "muted" }, "None yet."));
  const waiting = progress.furthest_in_queue ? `; the last is at place ${progress.furthest_in_queue} in the queue` : "";
  $("#teacher-budget").textContent = `${progress.students.length} students · ${progress.budget.in_flight} of ${progress.budget.limit} runs in flight${waiting}`;
  $("#teacher-updated").textContent = `Updated ${new Date().toLocaleTimeString()}`;
}

async function downloadCsv(id, token, code) {
  try {
    const text = await api.getClassCsv(id, token);
    const link = h("a", { href: URL.createObjectURL(new Blob([text], { type: "text/csv" })), download: `class-${code}.csv` });
    document.body.append(link);
    link.click();
    link.remove();
  } catch (error) {
    showProblem($("#teacher-problem"), error);
  }
}

function teacherPage(id) {
  const token = teacherToken(id);
  $("#teacher").hidden = false;
  if (!token) {
    showProblem($("#teacher-problem"), new Error("This page needs the teacher link (with #token=…) that starting the class gave you."));
    return;
  }
  let code = "";
  const remove = async (student) => {
    if (!confirm(`Remove ${student.name} from the class?`)) return;
    try {
      await api.removeStudent(id, student.id, token);
    } catch (error) {
      showProblem($("#teacher-problem"), error);
    }
  };
  const poll = async () => {
    try {
      const progress = await api.getClassProgress(id, token);
      code = progress.code;
      $("#teacher-code").textContent = code;
      $("#class-code").textContent = `Class ${code}`;
      $("#teacher-join").textContent = `${location.origin}/c/${code}`;
      $("#teacher-lesson").href = `/l/${encodeURIComponent(progress.lesson)}?rev=${progress.revision}`;
      $("#teacher-problem").hidden = true;
      renderGrid(progress, remove);
    } catch (error) {
      showProblem($("#teacher-problem"), error);
      if (error.status === 401 || error.status === 403 || error.status === 404) return;
    }
    setTimeout(poll, POLL_MS);
  };
  $("#teacher-csv").addEventListener("click", () => downloadCsv(id, token, code));
  poll();
}

const [, kind, key] = location.pathname.split("/");
if (kind === "c") joinPage(decodeURIComponent(key));
else teacherPage(decodeURIComponent(key));
document.documentElement.dataset.ready = "1";
