// The teacher's side of a lesson: collect steps from the editor, edit each step's code in a real
// editor and its note with a preview, reorder by dragging or Alt+↑/↓, then create the lesson (its
// stable link, an edit link with the secret token, a link to this revision, an embed snippet) or,
// for a lesson this browser holds the edit token of, save the next revision. The draft is kept in
// this browser until it is saved.

import { createEditor } from "../vendor/codemirror/codemirror.esm.min.js";
import * as api from "./api.js";
import { $, fill, h } from "./dom.js";
import { keepLessonToken, lessonToken, plural } from "./lesson.js";
import { wireCopyButtons } from "./links.js";
import { renderMarkdown } from "./markdown.js";

const BUILDER_KEY = "pp:lesson-builder";

/** Move item `from` of `list` to position `to` (a new array). */
export function moved(list, from, to) {
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(Math.max(0, Math.min(next.length, to)), 0, item);
  return next;
}

export class LessonBuilder {
  /**
   * @param {HTMLDialogElement} dialog
   * @param {{current: () => object, storage: object, onProblem: (error: Error, what: string) => void,
   *          onEmbed: (target: object) => void, onSaved?: (saved: object) => void}} hooks
   */
  constructor(dialog, hooks) {
    this.dialog = dialog;
    this.hooks = hooks;
    this.draft = this.load();
    this.selected = null;
    this.code = null; // the step editor, made when first needed
    $("#lesson-add", dialog).addEventListener("click", () => this.add());
    $("#lesson-create", dialog).addEventListener("click", () => this.save());
    $("#lesson-clear", dialog).addEventListener("click", () => this.clear());
    $("#lesson-builder-title", dialog).addEventListener("input", (e) => ((this.draft.title = e.target.value), this.store()));
    $("#lesson-builder-close", dialog).addEventListener("click", () => dialog.close());
    $("#lesson-step-note", dialog).addEventListener("input", (e) => this.editNote(e.target.value));
    $("#note-write", dialog).addEventListener("click", () => this.preview(false));
    $("#note-preview", dialog).addEventListener("click", () => this.preview(true));
    wireCopyButtons($("#lesson-links", dialog));
  }

  load() {
    try {
      const saved = JSON.parse(this.hooks.storage.get(BUILDER_KEY) || "null");
      if (saved && Array.isArray(saved.steps)) return saved;
    } catch {
      /* a broken draft is dropped */
    }
    return { title: "", steps: [], lesson: null };
  }

  store() {
    this.hooks.storage.set(BUILDER_KEY, JSON.stringify(this.draft));
  }

  open() {
    $("#lesson-builder-title", this.dialog).value = this.draft.title;
    this.render();
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** Edit a saved lesson (GET /api/lessons/{id}) whose token this browser holds: its next revision. */
  edit(lesson) {
    const steps = lesson.steps.map(({ source, entry, chip, options, note }) => ({ source, entry, chip, options, note }));
    this.draft = { title: lesson.title, steps, lesson: { id: lesson.id, revision: lesson.latest_revision } };
    this.selected = steps.length ? 0 : null;
    this.store();
    $("#lesson-links", this.dialog).hidden = true;
    this.open();
  }

  add() {
    this.draft.steps.push({ ...this.hooks.current(), note: "" });
    this.store();
    this.select(this.draft.steps.length - 1);
    $("#lesson-step-note", this.dialog).focus();
  }

  clear() {
    this.draft = { title: "", steps: [], lesson: null };
    this.selected = null;
    this.store();
    $("#lesson-links", this.dialog).hidden = true;
    this.open();
  }

  move(i, to) {
    if (to < 0 || to >= this.draft.steps.length || to === i) return;
    const chosen = this.draft.steps[this.selected];
    this.draft.steps = moved(this.draft.steps, i, to);
    this.selected = chosen ? this.draft.steps.indexOf(chosen) : null; // the selection follows its step
    this.store();
    this.render();
    this.dialog.querySelector(`.lesson-step[data-index='${to}'] .lesson-step-head`)?.focus();
  }

  remove(i) {
    this.draft.steps.splice(i, 1);
    this.selected = this.draft.steps.length ? Math.min(this.selected ?? 0, this.draft.steps.length - 1) : null;
    this.store();
    this.render();
  }

  select(i) {
    this.selected = i;
    this.render();
  }

  editNote(text) {
    const step = this.draft.steps[this.selected];
    if (!step) return;
    step.note = text;
    this.store();
  }

  preview(on) {
    const step = this.draft.steps[this.selected];
    $("#note-write", this.dialog).setAttribute("aria-pressed", String(!on));
    $("#note-preview", this.dialog).setAttribute("aria-pressed", String(on));
    $("#lesson-step-note", this.dialog).hidden = on;
    const preview = $("#lesson-step-preview", this.dialog);
    preview.hidden = !on;
    preview.replaceChildren(on && step ? renderMarkdown(step.note || "*(no note)*") : "");
  }

  /** The selected step in the step editor: its code in a real editor, its note. */
  renderStepEditor() {
    const step = this.draft.steps[this.selected];
    const section = $("#lesson-step-editor", this.dialog);
    section.hidden = !step;
    if (!step) return;
    if (!this.code) {
      this.code = createEditor($("#lesson-step-code", this.dialog), {
        label: "The selected step's code",
        onChange: (text) => {
          const current = this.draft.steps[this.selected];
          if (current && current.source !== text) ((current.source = text), this.store());
        },
      });
    }
    $("#lesson-step-heading", this.dialog).textContent = `Step ${this.selected + 1}: ${step.entry ?? "scratch"} on ${step.chip}`;
    if (this.code.getValue() !== step.source) this.code.setValue(step.source);
    $("#lesson-step-note", this.dialog).value = step.note;
    this.preview(false);
  }

  stepItem(step, i, n) {
    const head = h(
      "div",
      { class: "lesson-step-head", tabindex: 0, role: "button", "aria-pressed": String(i === this.selected), "aria-label": `Step ${i + 1}, ${step.entry ?? "scratch"}: select; Alt+↑ / Alt+↓ moves it`,
        onclick: () => this.select(i),
        onkeydown: (e) => {
          if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
            e.preventDefault();
            this.move(i, i + (e.key === "ArrowUp" ? -1 : 1));
          } else if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            this.select(i);
          }
        } },
      h("span", { class: "drag-handle", "aria-hidden": "true" }, "⠿"),
      h("strong", {}, `Step ${i + 1}`),
      h("span", { class: "muted lesson-step-what" }, ` ${step.entry ?? "scratch"} · ${step.chip} · ${firstLine(step.source)}`),
      h("span", { class: "spacer" }),
      h("button", { type: "button", class: "icon", "aria-label": `Move step ${i + 1} up`, disabled: i === 0, onclick: (e) => (e.stopPropagation(), this.move(i, i - 1)) }, "↑"),
      h("button", { type: "button", class: "icon", "aria-label": `Move step ${i + 1} down`, disabled: i === n - 1, onclick: (e) => (e.stopPropagation(), this.move(i, i + 1)) }, "↓"),
      h("button", { type: "button", class: "icon", "aria-label": `Remove step ${i + 1}`, onclick: (e) => (e.stopPropagation(), this.remove(i)) }, "✕"),
    );
    return h(
      "li",
      { class: "lesson-step", draggable: "true", dataset: { index: i, selected: String(i === this.selected) },
        ondragstart: (e) => (e.dataTransfer.setData("text/x-lesson-step", String(i)), (e.dataTransfer.effectAllowed = "move")),
        ondragover: (e) => e.preventDefault(),
        ondrop: (e) => {
          e.preventDefault();
          const from = Number(e.dataTransfer.getData("text/x-lesson-step"));
          if (Number.isInteger(from)) this.move(from, i);
        } },
      head,
    );
  }

  render() {
    const list = $("#lesson-steps", this.dialog);
    const steps = this.draft.steps;
    list.replaceChildren(...steps.map((step, i) => this.stepItem(step, i, steps.length)));
    if (!steps.length) list.append(h("li", { class: "muted" }, "No steps yet: set up the editor, chip and options, then add it as a step."));
    const revising = Boolean(this.draft.lesson);
    $("#lesson-heading", this.dialog).textContent = revising ? `Edit the lesson (revision ${this.draft.lesson.revision})` : "Build a lesson";
    const create = $("#lesson-create", this.dialog);
    create.disabled = !steps.length;
    create.textContent = revising ? "Save as a new revision" : `Create the lesson link (${plural(steps.length, "step")})`;
    this.renderStepEditor();
  }

  async save() {
    const body = {
      title: this.draft.title.trim() || "Untitled lesson",
      steps: this.draft.steps.map(({ source, entry, chip, options, note }) => ({ source, entry, chip, options, note })),
    };
    const lesson = this.draft.lesson;
    let saved;
    try {
      if (lesson) saved = await api.reviseLesson(lesson.id, body, lessonToken(this.hooks.storage, lesson.id) ?? "");
      else saved = await api.createLesson(body);
    } catch (error) {
      this.hooks.onProblem(error, lesson ? "Could not save the revision" : "Could not create the lesson");
      return;
    }
    if (saved.token) keepLessonToken(this.hooks.storage, saved.id, saved.token);
    this.draft.lesson = { id: saved.id, revision: saved.revision };
    this.store();
    this.render();
    this.showLinks(saved);
    this.hooks.onSaved?.(saved);
  }

  showLinks(saved) {
    const token = lessonToken(this.hooks.storage, saved.id);
    const origin = location.origin;
    const link = (id, label, url, note) =>
      h("div", { class: "link-row" },
        h("label", { for: id }, label),
        h("input", { id, type: "text", readonly: true, value: url }),
        h("button", { type: "button", dataset: { copy: `#${id}` } }, "Copy"),
        note ? h("span", { class: "muted" }, note) : null);
    const box = $("#lesson-links", this.dialog);
    fill(box,
      link("lesson-url", "Lesson link (always the latest revision)", `${origin}${saved.url}`),
      link("lesson-revision-url", `This revision (${saved.revision})`, `${origin}${saved.revision_url}`),
      token ? link("lesson-edit-url", "Edit link: keep it to yourself", `${origin}${saved.url}#edit=${token}`, "whoever has it can change the lesson") : null,
      h("div", { class: "row" },
        h("button", { type: "button", id: "lesson-embed", onclick: () => this.hooks.onEmbed({ kind: "lesson", id: saved.id, title: this.draft.title }) }, "Embed…"),
        h("span", { class: "muted copy-status", "aria-live": "polite" })),
    );
    box.hidden = false;
    // The links are what the teacher came for: bring them into the dialog's view (they were below its fold).
    box.scrollIntoView({ block: "nearest" });
    $("#lesson-url", this.dialog).select();
  }
}

function firstLine(source) {
  const line = (source || "").split("\n").find((l) => l.trim() !== "") || "(empty)";
  return line.length > 48 ? `${line.slice(0, 47)}…` : line;
}
