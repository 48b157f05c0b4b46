// Lessons: an ordered list of steps (editor state + a Markdown note) behind one link, /l/{id}.
// `LessonPlayer` walks a student through one (each step editable and runnable; edits kept per
// step in this browser; "Reset this step" brings the teacher's version back). `LessonBuilder` is
// the teacher's side: collect steps from the editor as they go, then create the link.

import * as api from "./api.js";
import { $, h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

const BUILDER_KEY = "pp:lesson-builder";

/** A step as the player loads it: the step's content, with the student's edits if any. */
function draftKey(lessonId, index) {
  return `pp:lesson:${lessonId}:${index}`;
}

export class LessonPlayer {
  /**
   * @param {HTMLElement} root the lesson bar
   * @param {object} lesson GET /api/lessons/{id}
   * @param {{load: (step: object, source: string) => Promise<void>, storage: object, onStep?: (index: number) => void}} hooks
   */
  constructor(root, lesson, hooks) {
    this.root = root;
    this.lesson = lesson;
    this.hooks = hooks;
    this.index = 0;
  }

  get step() {
    return this.lesson.steps[this.index];
  }

  /** Show step `index` (0-based), with this browser's edits of it if there are any. */
  async go(index) {
    const n = this.lesson.steps.length;
    this.index = Math.max(0, Math.min(n - 1, index));
    const draft = this.hooks.storage.get(draftKey(this.lesson.id, this.index));
    await this.hooks.load(this.step, draft ?? this.step.source);
    this.render(draft !== null);
    this.hooks.onStep?.(this.index);
  }

  next() {
    return this.go(this.index + 1);
  }

  previous() {
    return this.go(this.index - 1);
  }

  /** Drop this browser's edits of the current step and show the teacher's version again. */
  async reset() {
    this.hooks.storage.set(draftKey(this.lesson.id, this.index), null);
    await this.go(this.index);
  }

  /** The editor changed: keep the text as this step's draft (null when it is the step's own). */
  edited(text) {
    const key = draftKey(this.lesson.id, this.index);
    this.hooks.storage.set(key, text === this.step.source ? null : text);
    this.root.querySelector("#lesson-edited")?.toggleAttribute("hidden", text === this.step.source);
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
    this.root.replaceChildren(
      h(
        "div",
        { class: "lesson-head" },
        h("strong", { id: "lesson-title", class: "lesson-title" }, this.lesson.title),
        h("span", { id: "lesson-position", class: "muted", dataset: { step: this.index + 1, of: n } }, `Step ${this.index + 1} of ${n}`),
        h("nav", { class: "lesson-dots", "aria-label": "Lesson steps" }, dots),
        h("span", { class: "spacer" }),
        h("span", { id: "lesson-edited", class: "muted", hidden: !edited }, "edited"),
        h("button", { type: "button", id: "lesson-reset", title: "Discard your edits of this step", onclick: () => this.reset() }, "Reset this step"),
        h("button", { type: "button", id: "lesson-prev", disabled: this.index === 0, title: "Previous step (Alt+←)", onclick: () => this.previous() }, "← Previous"),
        h("button", { type: "button", id: "lesson-next", class: "primary", disabled: this.index === n - 1, title: "Next step (Alt+→)", onclick: () => this.next() }, "Next →"),
      ),
      this.step.note ? h("div", { id: "lesson-note", class: "lesson-note markdown" }, renderMarkdown(this.step.note)) : null,
    );
    this.root.hidden = false;
  }
}

/** The teacher's lesson builder: steps collected from the editor, kept in this browser until created. */
export class LessonBuilder {
  /**
   * @param {HTMLDialogElement} dialog
   * @param {{current: () => object, storage: object, onProblem: (error: Error, what: string) => void}} hooks
   */
  constructor(dialog, hooks) {
    this.dialog = dialog;
    this.hooks = hooks;
    this.draft = this.load();
    $("#lesson-add", dialog).addEventListener("click", () => this.add());
    $("#lesson-create", dialog).addEventListener("click", () => this.create());
    $("#lesson-clear", dialog).addEventListener("click", () => this.clear());
    $("#lesson-builder-title", dialog).addEventListener("input", (e) => ((this.draft.title = e.target.value), this.save()));
    $("#lesson-builder-close", dialog).addEventListener("click", () => dialog.close());
  }

  load() {
    try {
      const saved = JSON.parse(this.hooks.storage.get(BUILDER_KEY) || "null");
      if (saved && Array.isArray(saved.steps)) return saved;
    } catch {
      /* a broken draft is dropped */
    }
    return { title: "", steps: [] };
  }

  save() {
    this.hooks.storage.set(BUILDER_KEY, JSON.stringify(this.draft));
  }

  open() {
    $("#lesson-builder-title", this.dialog).value = this.draft.title;
    $("#lesson-link", this.dialog).hidden = true;
    this.render();
    this.dialog.showModal();
  }

  add() {
    this.draft.steps.push({ ...this.hooks.current(), note: "" });
    this.save();
    this.render();
    this.dialog.querySelector(".lesson-step:last-child textarea")?.focus();
  }

  clear() {
    this.draft = { title: "", steps: [] };
    this.save();
    this.open();
  }

  move(i, by) {
    const steps = this.draft.steps;
    const j = i + by;
    if (j < 0 || j >= steps.length) return;
    [steps[i], steps[j]] = [steps[j], steps[i]];
    this.save();
    this.render();
  }

  remove(i) {
    this.draft.steps.splice(i, 1);
    this.save();
    this.render();
  }

  render() {
    const list = $("#lesson-steps", this.dialog);
    const steps = this.draft.steps;
    list.replaceChildren(
      ...steps.map((step, i) =>
        h(
          "li",
          { class: "lesson-step", dataset: { index: i } },
          h(
            "div",
            { class: "lesson-step-head" },
            h("strong", {}, `Step ${i + 1}`),
            h("span", { class: "muted" }, ` ${step.entry ?? "scratch"} · ${step.chip} · ${firstLine(step.source)}`),
            h("span", { class: "spacer" }),
            h("button", { type: "button", class: "icon", "aria-label": `Move step ${i + 1} up`, disabled: i === 0, onclick: () => this.move(i, -1) }, "↑"),
            h("button", { type: "button", class: "icon", "aria-label": `Move step ${i + 1} down`, disabled: i === steps.length - 1, onclick: () => this.move(i, 1) }, "↓"),
            h("button", { type: "button", class: "icon", "aria-label": `Remove step ${i + 1}`, onclick: () => this.remove(i) }, "✕"),
          ),
          h("textarea", {
            rows: 3,
            "aria-label": `Note for step ${i + 1} (Markdown)`,
            placeholder: "A note for this step (Markdown): what to look at, what to try.",
            oninput: (e) => ((step.note = e.target.value), this.save()),
          }, step.note),
        ),
      ),
    );
    if (!steps.length) list.append(h("li", { class: "muted" }, "No steps yet: set up the editor, chip and options, then add it as a step."));
    $("#lesson-create", this.dialog).disabled = !steps.length;
  }

  async create() {
    const body = {
      title: this.draft.title.trim() || "Untitled lesson",
      steps: this.draft.steps.map(({ source, entry, chip, options, note }) => ({ source, entry, chip, options, note })),
    };
    let created;
    try {
      created = await api.createLesson(body);
    } catch (error) {
      this.hooks.onProblem(error, "Could not create the lesson");
      return;
    }
    const link = $("#lesson-link", this.dialog);
    const url = new URL(created.url, location.origin).href;
    $("#lesson-url", this.dialog).value = url;
    link.hidden = false;
    $("#lesson-url", this.dialog).select();
  }
}

function firstLine(source) {
  const line = (source || "").split("\n").find((l) => l.trim() !== "") || "(empty)";
  return line.length > 48 ? `${line.slice(0, 47)}…` : line;
}
