// The class pages. /c/{code}: a student types a nickname and joins (the student token is kept in
// this browser, classroom.js), then goes to the lesson. /t/{id}#token=…: the teacher's page, live
// over Server-Sent Events (GET /api/classes/{id}/events: the whole grid at once and after every
// change, on any web server): the grid, raised hands, follow-me, common mistakes, class boards, the
// steps' setup, renaming and removing students, closing the class to new students, the grid as CSV. `?present=1` lays it out for a
// projector (larger, no editing controls). The teacher token leaves the fragment for this browser's
// storage at once, so it is not left in the address bar on a projector; the page shows the whole
// teacher link, copyable (never on the projector), and without a kept token (another device) asks
// for the link or its token instead.

import * as api from "./api.js";
import { h, $ } from "./dom.js";
import { keepMembership, teacherKey } from "./classroom.js";
import { wireCopyButtons } from "./links.js";
import { renderBoards, renderCommon, renderFollow, renderGrid, renderHands, renderJoins, renderSetup } from "./classgrid.js";
import { storage } from "./storage.js";

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

// -- the teacher's page --------------------------------------------------------------------------

/** The teacher token: from the link's fragment (then kept here and dropped from the address), or kept. */
function teacherToken(id) {
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromLink) {
    storage.set(teacherKey(id), fromLink);
    history.replaceState(null, "", `${location.pathname}${location.search}`);
  }
  return fromLink || storage.get(teacherKey(id));
}

/** The token in a pasted teacher link (…#token=…), or the text itself when it is the bare token. */
function tokenFrom(text) {
  const trimmed = text.trim();
  const hash = trimmed.indexOf("#");
  return hash < 0 ? trimmed : new URLSearchParams(trimmed.slice(hash + 1)).get("token") ?? "";
}

/** No token here, or a refused one: the teacher pastes the link (or the token); kept once it opens the class. */
function askForToken(id) {
  const form = $("#teacher-reopen");
  if (!form.hidden) return;
  form.hidden = false;
  $("#teacher-link-box").hidden = true;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = tokenFrom($("#teacher-reopen-link").value);
    try {
      await api.getClassProgress(id, token);
    } catch (error) {
      showProblem($("#teacher-problem"), error);
      return;
    }
    storage.set(teacherKey(id), token);
    location.reload();
  });
  $("#teacher-reopen-link").focus();
}

function showTeacherLink(id, token) {
  $("#teacher-link").value = `${location.origin}/t/${encodeURIComponent(id)}#token=${encodeURIComponent(token)}`;
  $("#teacher-link-box").hidden = false;
  wireCopyButtons($("#teacher-link-box"));
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

/** What the teacher's buttons do; every change comes back through the stream. */
function teacherActions(id, token) {
  const attempt = (call) => async (...args) => {
    try {
      await call(...args);
      $("#teacher-problem").hidden = true;
    } catch (error) {
      showProblem($("#teacher-problem"), error);
    }
  };
  return {
    remove: attempt(async (student) => confirm(`Remove ${student.name} from the class?`) && api.removeStudent(id, student.id, token)),
    rename: attempt(async (student) => {
      const name = prompt(`A new nickname for ${student.name}:`, student.name)?.trim();
      if (name && name !== student.name) await api.renameStudent(id, student.id, name, token);
    }),
    lower: attempt((hand) => api.lowerHand(id, hand.student_id, token)),
    clear: attempt(() => api.clearHands(id, token)),
    follow: attempt((step) => api.setFollow(id, step, token)),
    setUp: attempt((step, setup) => api.setUpStep(id, step, setup, token)),
    joins: attempt((joins, change) => api.setClassJoins(id, { ...joinsNow(joins), ...change }, token)),
    perAddress: attempt(async (joins) => {
      const answer = prompt("How many students may join from one network address? (A room behind one school address needs as many as it has.)", String(joins.per_address))?.trim();
      if (!answer) return;
      const count = Number(answer);
      if (!Number.isInteger(count) || count < 1) throw new Error(`Not a number of students: ${answer}`);
      await api.setClassJoins(id, { ...joinsNow(joins), per_address: count }, token);
    }),
  };
}

/** The class's door as the server keeps it: open or closed, and students per address (null: the default). */
function joinsNow(joins) {
  return { open: joins.open, per_address: joins.per_address === joins.per_address_default ? null : joins.per_address };
}

function render(progress, actions, chips) {
  $("#teacher-code").textContent = progress.code;
  $("#class-code").textContent = `Class ${progress.code}`;
  $("#teacher-join").textContent = `${location.origin}/c/${progress.code}`;
  $("#teacher-lesson").href = `/l/${encodeURIComponent(progress.lesson)}?rev=${progress.revision}`;
  renderGrid(progress, actions);
  renderHands(progress, actions);
  renderCommon(progress);
  renderBoards(progress);
  renderFollow(progress);
  renderSetup(progress, chips, actions.setUp);
  const waiting = progress.furthest_in_queue ? `; the last is at place ${progress.furthest_in_queue} in the queue` : "";
  $("#teacher-budget").textContent = `${progress.students.length} students · ${progress.budget.in_flight} of ${progress.budget.limit} runs in flight${waiting}`;
  renderJoins(progress, actions);
  $("#teacher-updated").textContent = `Updated ${new Date().toLocaleTimeString()}`;
}

async function teacherPage(id) {
  const token = teacherToken(id);
  const present = new URLSearchParams(location.search).get("present") === "1";
  document.documentElement.dataset.present = present ? "1" : "0";
  $("#teacher-present").textContent = present ? "Leave presentation" : "Present";
  $("#teacher-present").href = present ? location.pathname : "?present=1";
  $("#teacher").hidden = false;
  if (!token) {
    askForToken(id);
    return;
  }
  showTeacherLink(id, token);
  const actions = teacherActions(id, token);
  const chips = await api.getChips().then((found) => found.map((chip) => chip.name)).catch(() => []);
  let code = "";
  api.followClass(`/api/classes/${encodeURIComponent(id)}/events`, token, (progress) => {
    code = progress.code;
    render(progress, actions, chips);
  }, (trouble) => {
    $("#teacher-live").hidden = !trouble;
    $("#teacher-live").textContent = trouble ? `Live updates interrupted (${trouble.message}); reconnecting…` : "";
    if (trouble && [401, 403, 404].includes(trouble.status)) showProblem($("#teacher-problem"), trouble);
    if (trouble && [401, 403].includes(trouble.status)) askForToken(id);
  });
  $("#teacher-csv").addEventListener("click", () => downloadCsv(id, token, code));
  $("#teacher-clear-hands").addEventListener("click", () => actions.clear());
  $("#teacher-follow").addEventListener("change", (event) => actions.follow(event.target.value ? Number(event.target.value) : null));
}

const [, kind, key] = location.pathname.split("/");
if (kind === "c") joinPage(decodeURIComponent(key));
else teacherPage(decodeURIComponent(key));
document.documentElement.dataset.ready = "1";
