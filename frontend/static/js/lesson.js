// The student's side of a lesson (/l/{id}): the steps of one revision, each editable and runnable,
// with the teacher's note. Edits are kept per step in this browser ("Reset this step" brings the
// teacher's version back). A lesson is a document the teacher keeps editing: the page stays on the
// revision it opened (a reload too), checks now and then for a newer one and offers it, but never
// switches by itself. The teacher's side, building and revising, is builder.js.

import * as api from "./api.js";
import { fill, h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

// A lesson's edit token, kept in this browser by whoever created the lesson (the builder, loaded
// only when used, and the page that opens a lesson both need it).
const TOKEN_PREFIX = "pp:lesson-token:";
export const lessonToken = (storage, id) => storage.get(TOKEN_PREFIX + id);
export const keepLessonToken = (storage, id, token) => storage.set(TOKEN_PREFIX + id, token);

const CHECK_SECONDS = 60;

/** "1 step", "3 steps". */
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Where this browser keeps its edits of one step of one revision. */
function draftKey(lesson, index) {
  return `pp:lesson:${lesson.id}:r${lesson.revision}:${index}`;
}

export class LessonPlayer {
  /**
   * @param {HTMLElement} root the lesson bar
   * @param {object} lesson GET /api/lessons/{id} (or one of its revisions)
   * @param {{load: (step: object, source: string, index: number) => Promise<void>, storage: object,
   *          onStep?: (index: number) => void, onNewer?: (latest: object) => void,
   *          onEdit?: () => void, classPart?: (player: LessonPlayer) => Node,
   *          onEdited?: (player: LessonPlayer) => void}} hooks
   *   load: put the step in the editor; onStep: the step shown changed (by the student);
   *   onNewer: a newer revision exists ({revision, revision_url}); onEdit: the teacher's edit button;
   *   classPart: the bar's class session part (classroom.js); onEdited: the student edited the step
   */
  constructor(root, lesson, hooks) {
    this.root = root;
    this.lesson = lesson;
    this.hooks = hooks;
    this.index = 0;
    this.newer = null;
    this.timer = setInterval(() => this.checkNewer(), CHECK_SECONDS * 1000);
    this.onVisible = () => document.visibilityState === "visible" && this.checkNewer();
    document.addEventListener("visibilitychange", this.onVisible);
  }

  get step() {
    return this.lesson.steps[this.index];
  }

  /** Show step `index` (0-based), with this browser's edits of it if there are any. */
  async go(index, { quiet = false } = {}) {
    const n = this.lesson.steps.length;
    this.index = Math.max(0, Math.min(n - 1, index));
    const draft = this.hooks.storage.get(draftKey(this.lesson, this.index));
    this.loaded = draft ?? this.step.source; // what the editor shows before the student types
    await this.hooks.load(this.step, draft ?? this.step.source, this.index);
    this.render(draft !== null);
    if (!quiet) this.hooks.onStep?.(this.index);
    this.checkNewer();
  }

  next() {
    return this.go(this.index + 1);
  }

  previous() {
    return this.go(this.index - 1);
  }

  /** Drop this browser's edits of the current step and show the teacher's version again. */
  async reset() {
    this.hooks.storage.set(draftKey(this.lesson, this.index), null);
    await this.go(this.index, { quiet: true });
  }

  /** The editor changed: keep the text as this step's draft (null when it is the step's own). */
  edited(text) {
    this.hooks.storage.set(draftKey(this.lesson, this.index), text === this.step.source ? null : text);
    this.root.querySelector("#lesson-edited")?.toggleAttribute("hidden", text === this.step.source);
    if (text !== this.loaded) this.hooks.onEdited?.(this); // typing, not the step being loaded
  }

  /** Ask the server whether the teacher saved a newer revision; say so once if they did. */
  async checkNewer() {
    if (!this.lesson.editable && this.lesson.latest_revision === 1) return;
    let revisions;
    try {
      revisions = await api.getLessonRevisions(this.lesson.id);
    } catch {
      return; // offline for a moment: the next check will tell
    }
    const latest = revisions[revisions.length - 1];
    if (latest && latest.revision > this.lesson.revision && latest.revision !== this.newer?.revision) this.announce(latest);
  }

  announce(latest) {
    this.newer = latest;
    this.hooks.onNewer?.(latest);
  }

  stop() {
    clearInterval(this.timer);
    document.removeEventListener("visibilitychange", this.onVisible);
  }

  render(edited) {
    const n = this.lesson.steps.length;
    const dots = this.lesson.steps.map((step, i) =>
      h(
        "button",
        {
          type: "button",
          class: "lesson-dot",
          "aria-current": i === this.index ? "step" : null,
          "aria-label": `Step ${i + 1}`,
          title: `Step ${i + 1}${step.entry ? ` (${step.entry})` : ""}`,
          onclick: () => this.go(i),
        },
        String(i + 1),
      ),
    );
    const revision = this.lesson.latest_revision > 1 || this.lesson.revision > 1 ? `revision ${this.lesson.revision}` : null;
    fill(this.root,
      h(
        "div",
        { class: "lesson-head" },
        h("strong", { id: "lesson-title", class: "lesson-title" }, this.lesson.title),
        h("span", { id: "lesson-position", class: "muted", dataset: { step: this.index + 1, of: n, revision: this.lesson.revision } },
          `Step ${this.index + 1} of ${n}`, revision ? ` · ${revision}` : ""),
        h("nav", { class: "lesson-dots", "aria-label": `Lesson steps (${plural(n, "step")})` }, dots),
        h("span", { class: "spacer" }),
        h("span", { id: "lesson-edited", class: "muted", hidden: !edited }, "edited"),
        this.hooks.classPart?.(this) ?? null,
        this.hooks.onEdit ? h("button", { type: "button", id: "lesson-edit", title: "You hold this lesson's edit link", onclick: () => this.hooks.onEdit() }, "Edit lesson") : null,
        h("button", { type: "button", id: "lesson-reset", title: "Discard your edits of this step", onclick: () => this.reset() }, "Reset this step"),
        h("button", { type: "button", id: "lesson-prev", disabled: this.index === 0, title: "Previous step (Alt+←)", onclick: () => this.previous() }, "← Previous"),
        h("button", { type: "button", id: "lesson-next", class: "primary", disabled: this.index === n - 1, title: "Next step (Alt+→)", onclick: () => this.next() }, "Next →"),
      ),
      this.step.note ? h("div", { id: "lesson-note", class: "lesson-note markdown" }, renderMarkdown(this.step.note)) : null,
    );
    this.root.hidden = false;
  }
}
