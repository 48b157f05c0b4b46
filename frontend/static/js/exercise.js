// The entry's actions beside the editor: reset to the exercise template, show the worked solution
// (asked once per entry: it ends the exercise), load a known-wrong kernel (what is wrong stays
// behind a spoiler), diff against the template or the solution, download and upload the .py.

import { $, h } from "./dom.js";
import { download, fileName, wireUpload } from "./files.js";

const SEEN_PREFIX = "pp:solution-seen:";

export class ExerciseActions {
  /**
   * @param {{editor: object, notices: object, storage: object, entry: () => object | null,
   *          template: () => string, onLoaded: () => void, diff: object}} hooks
   *   entry: the selected entry's detail (null in scratch mode); onLoaded: the editor was replaced
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.confirm = $("#confirm-dialog");
    $("#reset").addEventListener("click", () => this.load(hooks.template(), hooks.entry() ? "the template" : "the scratch starter"));
    $("#solution").addEventListener("click", () => this.showSolution());
    $("#wrong").addEventListener("change", (event) => {
      const wrong = hooks.entry()?.wrong?.find((w) => w.name === event.target.value);
      event.target.value = "";
      if (wrong) this.load(wrong.source, `the wrong kernel "${wrong.name.replaceAll("_", " ")}" (expected: ${wrong.expect})`, wrong.why);
    });
    $("#diff-button").addEventListener("click", () => hooks.diff.open("template"));
    $("#download").addEventListener("click", () => download(hooks.editor.getValue(), fileName(hooks.entry()?.slug)));
    wireUpload(
      $("#upload"),
      (text, name) => this.load(text, `${name} from your computer`),
      (why) => hooks.notices.show("error", why, "upload-notice", { place: true }),
    );
    document.addEventListener("keydown", (event) => {
      if (event.altKey && event.shiftKey && event.code === "KeyD") {
        event.preventDefault();
        hooks.diff.open("template");
      }
    });
  }

  /** Load a kernel into the editor as one undoable step, and say so (`why`: a spoiler, folded). */
  load(text, what, why = "") {
    this.hooks.editor.setValue(text);
    this.hooks.onLoaded();
    const el = this.hooks.notices.show("info", `Loaded ${what}. Ctrl/⌘+Z in the editor undoes it.`, "load-notice", { place: true });
    if (why) el.append(h("details", { class: "why" }, h("summary", {}, "Why is it wrong? (spoiler)"), h("p", {}, why)));
    this.hooks.editor.focus();
  }

  /** The worked solution, after asking once per entry whether the learner really wants it. */
  async showSolution() {
    const entry = this.hooks.entry();
    if (!entry) return;
    const key = SEEN_PREFIX + entry.slug;
    if (!this.hooks.storage.get(key)) {
      if (!(await this.ask(entry))) return;
      this.hooks.storage.set(key, "1");
    }
    this.load(entry.solution, "the worked solution");
  }

  ask(entry) {
    $("#confirm-text", this.confirm).textContent =
      `This replaces your code with the worked solution of "${entry.title}" (Ctrl/⌘+Z brings yours back). ` +
      "Trying the holes yourself first is the exercise. You will not be asked again for this entry.";
    return new Promise((resolve) => {
      const done = (answer) => {
        this.confirm.removeEventListener("close", onClose);
        this.confirm.close();
        resolve(answer);
      };
      const onClose = () => done(false);
      $("#confirm-yes", this.confirm).onclick = () => done(true);
      $("#confirm-no", this.confirm).onclick = () => done(false);
      this.confirm.addEventListener("close", onClose);
      this.confirm.showModal();
      $("#confirm-no", this.confirm).focus();
    });
  }
}
