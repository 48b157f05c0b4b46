// The teacher's page, drawn from one class view (GET/SSE /api/classes/{id}/progress|events): the
// grid of students × steps (a run's status, "editing" when the student changed the step since,
// "late" after an assignment's deadline, the headline on hover), the raised hands in order, the
// room's common mistakes, the class boards, the steps' setup and who may join. Drawing only;
// class.js acts.

import { boardTable } from "./classboard.js";
import { fill, h, $ } from "./dom.js";
import { CELL_TEXT } from "./vocab.js";

const KINDS = { exercise: "Exercise", assignment: "Assignment", challenge: "Challenge" };

function hover(found) {
  if (!found) return null;
  const before = found.status === "editing" && found.last_status ? `last run: ${CELL_TEXT[found.last_status] ?? found.last_status}` : "";
  return [before, found.headline].filter(Boolean).join(" · ") || null;
}

function cell(student, step) {
  const found = student.steps[String(step)];
  const status = found?.status ?? "none";
  return h("td", { dataset: found?.late ? { status, step, late: "1" } : { status, step }, title: hover(found) },
    CELL_TEXT[status] ?? status, found?.late ? h("span", { class: "badge late" }, "late") : null);
}

function stepHead(setup, k) {
  const kind = setup?.kind ?? "exercise";
  const note = kind === "assignment" ? `due ${new Date(setup.deadline * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}` : kind === "challenge" ? "challenge" : "";
  return h("th", { scope: "col" }, `Step ${k}`, note ? h("small", { class: "muted" }, ` ${note}`) : null);
}

function studentHead(student, actions) {
  return h("th", { scope: "row" },
    student.hand ? h("span", { class: "badge hand", title: `Hand raised (${student.hand} in the queue)` }, `hand ${student.hand}`, " ") : null,
    h("span", { class: "student-name" }, student.name),
    h("button", { type: "button", class: "rename-student teacher-only", title: `Rename ${student.name}`, "aria-label": `Rename ${student.name}`, onclick: () => actions.rename(student) }, "✎"));
}

export function renderGrid(progress, actions) {
  const steps = Array.from({ length: progress.steps }, (_, i) => i + 1);
  fill($("#teacher-grid"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Student"), steps.map((k) => stepHead(progress.setup[k - 1], k)), h("th", { class: "teacher-only" }))),
    h("tbody", {}, progress.students.map((student) =>
      h("tr", { dataset: { student: student.id } }, studentHead(student, actions), steps.map((k) => cell(student, k)),
        h("td", { class: "teacher-only" }, h("button", { type: "button", class: "remove-student", title: `Remove ${student.name}: their token stops working`, onclick: () => actions.remove(student) }, "Remove"))))),
  );
}

export function renderHands(progress, actions) {
  const now = Date.now() / 1000;
  const hands = progress.hands.map((hand) =>
    h("li", { dataset: { student: hand.student_id } }, `${hand.name} `, h("span", { class: "muted" }, `(${Math.max(0, Math.round((now - hand.since) / 60))} min)`), " ",
      h("button", { type: "button", class: "teacher-only answer-hand", title: `Lower ${hand.name}'s hand`, onclick: () => actions.lower(hand) }, "Answered")));
  fill($("#teacher-hands"), hands.length ? hands : h("li", { class: "muted" }, "None."));
  $("#teacher-clear-hands").hidden = !hands.length;
}

export function renderCommon(progress) {
  const common = progress.common_errors.map((e) =>
    h("li", {}, h("span", { class: "count" }, `${e.students.length} students`), ` on step ${e.step}: ${e.headline}`, h("span", { class: "muted" }, ` (${e.students.join(", ")})`)));
  fill($("#teacher-common"), common.length ? common : h("li", { class: "muted" }, "None yet."));
}

export function renderBoards(progress) {
  fill($("#teacher-boards"), progress.boards.map((board) => boardTable(board, { teacher: true })));
}

/** The follow-me picker: "off" and each step, showing the class's follow step. */
export function renderFollow(progress) {
  const select = $("#teacher-follow");
  if (select.options.length !== progress.steps + 1) {
    fill(select, h("option", { value: "" }, "off"), Array.from({ length: progress.steps }, (_, i) => h("option", { value: String(i + 1) }, `step ${i + 1}`)));
  }
  if (document.activeElement !== select) select.value = progress.follow ? String(progress.follow) : "";
}

function localInput(seconds) {
  if (!seconds) return "";
  const date = new Date(seconds * 1000);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

/** The steps' setup table (drawn once per class, then kept: the teacher may be typing in it);
 * `chips`: the chip names (GET /api/chips) a challenge may rank on. */
export function renderSetup(progress, chips, save) {
  const table = $("#teacher-setup-table");
  if (table.dataset.drawn === progress.id) return;
  table.dataset.drawn = progress.id;
  fill(table, h("thead", {}, h("tr", {}, ["Step", "Kind", "Deadline (assignment)", "Chip (challenge)", "Board", ""].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, progress.setup.map((setup) => {
      const kind = h("select", { "aria-label": `Kind of step ${setup.step}` }, Object.entries(KINDS).map(([value, label]) => h("option", { value, selected: value === setup.kind }, label)));
      const deadline = h("input", { type: "datetime-local", value: localInput(setup.deadline), "aria-label": `Deadline of step ${setup.step}` });
      const chip = h("select", { "aria-label": `Chip of step ${setup.step}` }, ["", ...chips].map((c) => h("option", { value: c, selected: c === setup.chip }, c || "the step's")));
      const hide = h("input", { type: "checkbox", checked: setup.board_hidden, "aria-label": `Hide the board of step ${setup.step}` });
      const apply = () => save(setup.step, {
        kind: kind.value,
        deadline: kind.value === "assignment" && deadline.value ? new Date(deadline.value).getTime() / 1000 : null,
        chip: kind.value === "challenge" ? chip.value : "",
        board_hidden: kind.value === "challenge" && hide.checked,
      });
      return h("tr", { dataset: { step: setup.step } }, h("th", { scope: "row" }, String(setup.step)), h("td", {}, kind), h("td", {}, deadline), h("td", {}, chip),
        h("td", {}, h("label", {}, hide, " hide")), h("td", {}, h("button", { type: "button", class: "save-step", onclick: apply }, "Save")));
    })));
}

/** Who may join: open or closed (a button to change it), and how many students one network address
 * may have (a button that asks for another number). Drawn under the budget line, for the teacher only. */
export function renderJoins(progress, actions) {
  let line = $("#teacher-joins");
  if (!line) {
    line = h("p", { id: "teacher-joins", class: "class-joins teacher-only", "aria-live": "polite" });
    $("#teacher-budget").after(line);
  }
  const joins = progress.joins;
  fill(line,
    h("span", { class: "joins-state", dataset: { open: joins.open ? "1" : "0" } }, joins.open ? "Open to new students" : "Closed to new students"), " ",
    h("button", { type: "button", class: "joins-toggle", title: joins.open ? "Refuse new students (those in the class stay)" : "Let new students join again", onclick: () => actions.joins(joins, { open: !joins.open }) },
      joins.open ? "Close to new students" : "Open to new students"), " ",
    h("button", { type: "button", class: "joins-per-address", title: "How many students may join from one network address (raise it for a room behind one school address)", onclick: () => actions.perAddress(joins) },
      `${joins.per_address} per address`));
}
