// A lesson run as a class session, on the student's and the teacher's lesson page: membership kept
// in this browser per lesson (from the join page, /c/{code}), a class run's extra fields (the
// student's token and the step), and the lesson bar's part: who you are in the class, or a button
// that starts a class from this lesson for the teacher (its grid opens at /t/{id}).

import * as api from "./api.js";
import { h } from "./dom.js";
import { storage } from "./storage.js";

const memberKey = (lessonId) => `pp:class:${lessonId}`;
export const teacherKey = (classId) => `pp:teacher:${classId}`;

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

/** The lesson bar's class part: "In class ABC234 as ada" (and Leave), or "Start a class". */
export function classPart(player, notices) {
  const member = membership(player.lesson);
  if (member) {
    const leave = () => {
      storage.set(memberKey(player.lesson.id), null);
      player.render(false);
    };
    return h("span", { id: "lesson-class", class: "lesson-class", dataset: { code: member.code } },
      `Class ${member.code} · ${member.name} `,
      h("button", { type: "button", id: "class-leave", title: "Stop sending your runs to the class", onclick: leave }, "Leave"));
  }
  const start = async () => {
    try {
      const made = await api.createClass({ lesson: player.lesson.id, revision: player.lesson.revision });
      storage.set(teacherKey(made.id), made.teacher_token);
      location.assign(`${made.teacher_url}#token=${encodeURIComponent(made.teacher_token)}`);
    } catch (error) {
      notices.problem(error, "Could not start a class");
    }
  };
  return h("button", { type: "button", id: "class-start", title: "Run this lesson with a room: a join code and a live grid", onclick: start }, "Start a class");
}
