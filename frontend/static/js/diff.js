// The diff dialog: the editor's code side by side with the entry's template or its solution,
// unchanged stretches folded (CodeMirror's merge view, from the bundle, loaded when the dialog first opens).

import { $ } from "./dom.js";

let merge = null; // the merge view's module, once loaded: later dialogs show at once
const mergeView = async () => (merge ??= await import("../vendor/codemirror/diff.esm.min.js"));

export class DiffDialog {
  /** @param {{current: () => string, entry: () => object | null, wrap: () => boolean}} hooks */
  constructor(dialog, hooks) {
    this.dialog = dialog;
    this.hooks = hooks;
    this.view = null;
    this.against = "template";
    $("#diff-close", dialog).addEventListener("click", () => dialog.close());
    $("#diff-template", dialog).addEventListener("click", () => this.show("template"));
    $("#diff-solution", dialog).addEventListener("click", () => this.show("solution"));
    dialog.addEventListener("close", () => this.clear());
  }

  open(against = "template") {
    if (!this.dialog.open) this.dialog.showModal();
    this.show(against);
  }

  async show(against) {
    const { createDiffView } = merge ?? (await mergeView());
    const entry = this.hooks.entry();
    this.against = entry ? against : "template";
    const other = entry ? entry[this.against] : this.hooks.starter;
    $("#diff-solution", this.dialog).disabled = !entry;
    for (const name of ["template", "solution"]) $(`#diff-${name}`, this.dialog).setAttribute("aria-pressed", String(name === this.against));
    this.clear();
    const mine = this.hooks.current();
    this.view = createDiffView($("#diff-view", this.dialog), { left: mine, right: other, wrap: this.hooks.wrap() });
    const what = entry ? `the ${this.against}` : "the scratch starter";
    const summary = $("#diff-summary", this.dialog);
    summary.textContent = mine === other
      ? `Your code is exactly ${what}.`
      : `Left: your code. Right: ${what}. ${this.view.chunks} changed ${this.view.chunks === 1 ? "region" : "regions"}; unchanged lines are folded.`;
    summary.dataset.chunks = String(mine === other ? 0 : this.view.chunks);
  }

  clear() {
    this.view?.destroy();
    this.view = null;
    $("#diff-view", this.dialog).replaceChildren();
  }
}
