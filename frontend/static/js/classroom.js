// A lesson run as a class session, on the student's and the teacher's lesson page: membership kept
// in this browser per lesson (from the join page, /c/{code}), a class run's extra fields (the
// student's token and the step), and the lesson bar's part: who you are in the class, your raised
// hand, "follow the teacher" (on by default; the page moves to the step the teacher shows, unless
// you opt out), the class board of a challenge step and an assignment's deadline; or, for the
// teacher, a button that starts a class from this lesson (its page opens at /t/{id}) and, once this
// browser has started one, the way back to that class's teacher page. The student's
// page is live over Server-Sent Events (GET /api/classes/{id}/live) and tells the teacher which step
// its student is editing (at most every EDIT_REPORT_MS while typing).

import * as api from "./api.js";
import { boardTable } from "./classboard.js";
import { fill, h } from "./dom.js";
import { storage } from "./storage.js";

const memberKey = (lessonId) => `pp:class:${lessonId}`;
const followKey = (classId) => `pp:class-follow:${classId}`;
export const teacherKey = (classId) => `pp:teacher:${classId}`;
const teachingKey = (lessonId) => `pp:teaching:${lessonId}`;
const EDIT_REPORT_MS = 5000;
const CHALLENGE_NOTICE = "challenge-chip";

/** This browser's membership of a class on `lesson` (from POST /api/classes/{code}/join), or null. */
export function membership(lesson) {
  let found = null;
  try {
    found = JSON.parse(storage.get(memberKey(lesson.id)) ?? "null");
  } catch {
    return null;
  }
  return found && found.revision === lesson.revision ? found : null;
}

/** Keep a join's answer (and the code joined with) as this browser's membership of its lesson. */
export function keepMembership(joined, code) {
  storage.set(memberKey(joined.lesson), JSON.stringify({ ...joined, code }));
}

/** `body` (a POST /api/runs body) as a class run of the lesson step shown, when this browser is in its class. */
export function withClass(body, player) {
  const member = player ? membership(player.lesson) : null;
  return member ? { ...body, class_token: member.student_token, step: player.index + 1 } : body;
}

// -- the live class on a student's page ----------------------------------------------------------

let live = null; // {member, player, view, stream, followed, reported: {step, at}, timer}

function connect(player, member, notices) {
  if (live?.member.student_token === member.student_token) {
    live.player = player;
    return live;
  }
  live?.stream.close();
  live = { member, player, notices, view: null, followed: undefined, reported: null, timer: null };
  const mine = live;
  mine.stream = api.followClass(`/api/classes/${encodeURIComponent(member.class_id)}/live`, member.student_token, (view) => seen(mine, view));
  return live;
}

function following(member) {
  return storage.get(followKey(member.class_id)) !== "off";
}

function seen(state, view) {
  state.view = view;
  if (view.removed) {
    state.stream.close();
    storage.set(memberKey(state.player.lesson.id), null);
    live = null;
    state.notices?.problem?.(new Error("The teacher removed you from the class: your runs are your own again."), "Left the class");
  } else if (view.follow && view.follow !== state.followed && following(state.member)) {
    state.followed = view.follow;
    if (state.player.index !== view.follow - 1) state.player.go(view.follow - 1);
  }
  state.followed = view.follow ?? null;
  redraw(state);
}

/** The chip the class board of the step shown ranks on, when it is a challenge of this browser's class; else null. */
function challengeChip(player) {
  if (!player || !live || live.player !== player) return null;
  const setup = live.view?.steps?.[player.index];
  return setup?.kind === "challenge" ? setup.chip || player.step.chip : null;
}

/**
 * When a run is pressed: say if it is not on the chip the step's challenge ranks on (the board would
 * ignore it), with a button that runs that chip (`runOn(chip)`); a run on the right chip drops the note.
 */
export function checkChallengeChip(player, chip, notices, runOn) {
  const wanted = challengeChip(player);
  if (!wanted || wanted === chip) return notices.remove(CHALLENGE_NOTICE);
  const el = notices.show("warning", `Step ${player.index + 1} is a challenge on ${wanted}: the class board ranks runs on ${wanted} only, and this run is on ${chip}.`, CHALLENGE_NOTICE, { place: true });
  el.querySelector(".notice-text").append(" ", h("button", { type: "button", onclick: () => runOn(wanted) }, `Run on ${wanted}`));
}

/** The student edited the step shown: tell the teacher, at once on a new step, then every few seconds. */
export function classEdited(player) {
  if (!live || live.player !== player) return;
  const step = player.index + 1;
  const state = live;
  const send = () => {
    state.timer = null;
    state.reported = { step, at: Date.now() };
    api.reportEditing(state.member.class_id, step, state.member.student_token).catch(() => {});
  };
  if (!state.reported || state.reported.step !== step) return send();
  if (!state.timer) state.timer = setTimeout(send, Math.max(0, EDIT_REPORT_MS - (Date.now() - state.reported.at)));
}

function redraw(state) {
  const root = document.getElementById("lesson-class");
  if (root && state.player) fill(root, memberParts(state));
}

function memberParts(state) {
  const { member, view, player } = state;
  const step = player.index + 1;
  const setup = view?.steps?.[step - 1];
  const board = view?.boards?.find((b) => b.step === step);
  const hand = view?.hand;
  const raise = async () => {
    try {
      await api.setHand(member.class_id, !hand, member.student_token);
    } catch (error) {
      state.notices?.problem?.(error, "Could not change your hand");
    }
  };
  const follow = h("input", { type: "checkbox", id: "class-follow", checked: following(member) });
  follow.addEventListener("change", () => {
    storage.set(followKey(member.class_id), follow.checked ? null : "off");
    if (follow.checked && view?.follow && player.index !== view.follow - 1) player.go(view.follow - 1);
  });
  return [
    `Class ${member.code} · ${view?.name ?? member.name} `,
    setup?.kind === "assignment" ? h("span", { class: "badge", id: "class-deadline", title: "Runs after this are marked late" }, `due ${new Date(setup.deadline * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`) : null,
    h("button", { type: "button", id: "class-hand", "aria-pressed": hand ? "true" : "false", title: hand ? "Lower your hand" : "Ask the teacher for help", onclick: raise },
      hand ? `Lower hand (${hand} in line)` : "Raise hand"),
    h("label", { class: "class-follow", title: "Move to the step the teacher shows" }, follow, " Follow the teacher"),
    board ? h("details", { class: "class-board-details", id: "class-board" }, h("summary", {}, "Class board"), boardTable(board)) : null,
    h("button", { type: "button", id: "class-leave", title: "Stop sending your runs to the class", onclick: () => leave(player) }, "Leave"),
  ];
}

function leave(player) {
  live?.stream.close();
  live = null;
  storage.set(memberKey(player.lesson.id), null);
  player.render(false);
}

/** The class this browser last started on `lesson` ({id, code, teacher_url}), its token kept too, or null. */
function teaching(lesson) {
  try {
    const found = JSON.parse(storage.get(teachingKey(lesson.id)) ?? "null");
    return found && storage.get(teacherKey(found.id)) ? found : null;
  } catch {
    return null;
  }
}

/** The lesson bar's class part: the student's class (live), or "Start a class" (and the teacher's way back). */
export function classPart(player, notices) {
  const member = membership(player.lesson);
  if (member) {
    const state = connect(player, member, notices);
    return h("span", { id: "lesson-class", class: "lesson-class", dataset: { code: member.code } }, memberParts(state));
  }
  const start = async () => {
    try {
      const made = await api.createClass({ lesson: player.lesson.id, revision: player.lesson.revision });
      storage.set(teacherKey(made.id), made.teacher_token);
      storage.set(teachingKey(player.lesson.id), JSON.stringify({ id: made.id, code: made.code, teacher_url: made.teacher_url }));
      location.assign(`${made.teacher_url}#token=${encodeURIComponent(made.teacher_token)}`);
    } catch (error) {
      notices.problem(error, "Could not start a class");
    }
  };
  const mine = teaching(player.lesson);
  const button = h("button", { type: "button", id: "class-start", title: "Run this lesson with a room: a join code and a live grid", onclick: start },
    mine ? "Start another class" : "Start a class");
  if (!mine) return button;
  const back = h("a", { id: "class-teacher", href: mine.teacher_url, title: "The class you started from this lesson: its live grid" }, `Class ${mine.code}: teacher view`);
  return h("span", { class: "lesson-class" }, back, " ", button);
}
