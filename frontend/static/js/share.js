// The share panel: save the editor's whole state as a link (/s/{id}), show it, copy it, embed it.
// "with its result" keeps the last run's result with the link (the server stores its own result of
// that run, if the run is of exactly this state); readers see it until they run the kernel again.

import * as api from "./api.js";
import { $ } from "./dom.js";
import { wireCopyButtons } from "./links.js";

export class SharePanel {
  /**
   * @param {HTMLElement} root the panel
   * @param {{current: () => object, notices: import("./notices.js").Notices, lastRun: (state: object) => string | null,
   *          onEmbed: (target: object) => void}} hooks
   *   current: the editor's state as a share records it ({source, entry, chip, options});
   *   lastRun: the id of a finished run of exactly that state, if there is one
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.shared = null;
    this.latest = 0; // the newest share request: an older one that answers later is dropped
    wireCopyButtons(root);
    $("#share-close", root).addEventListener("click", () => this.close());
    $("#share-with-result", root).addEventListener("change", () => this.share());
    $("#share-embed", root).addEventListener("click", () => this.shared && this.hooks.onEmbed({ kind: "share", id: this.shared.id }));
  }

  async share() {
    const state = this.hooks.current();
    const run = this.hooks.lastRun(state);
    const withResult = $("#share-with-result", this.root);
    withResult.disabled = !run;
    withResult.title = run ? "Keep this run's result with the link" : "Run this exact kernel first: the link keeps the result of a run of exactly what it shares";
    if (!run) withResult.checked = false;
    // Share, then tick "with its result" at once: two requests in flight. The link shown is the
    // newest request's, and says what that request asked for, whichever answers first.
    const request = ++this.latest;
    const keepResult = withResult.checked;
    let created;
    try {
      created = await api.createShare(keepResult ? { ...state, run } : state);
    } catch (error) {
      if (request === this.latest) this.hooks.notices.problem(error, "Could not share");
      return;
    }
    if (request !== this.latest) return;
    this.shared = created;
    const url = $("#share-url", this.root);
    url.value = new URL(created.url, location.origin).href;
    url.dataset.withResult = keepResult ? "1" : "0";
    $("#copy-status", this.root).textContent = "";
    this.root.hidden = false;
    url.focus();
    url.select();
  }

  close() {
    this.root.hidden = true;
  }
}
