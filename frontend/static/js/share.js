// The share panel: save the editor's whole state as a link (/s/{id}), show the link, copy it.

import * as api from "./api.js";
import { $ } from "./dom.js";

export class SharePanel {
  /**
   * @param {HTMLElement} root the panel
   * @param {{current: () => object, notices: import("./notices.js").Notices}} hooks
   *   current: the editor's state as a share records it ({source, entry, chip, options})
   */
  constructor(root, { current, notices }) {
    this.root = root;
    this.current = current;
    this.notices = notices;
    $("#copy-link", root).addEventListener("click", () => this.copy());
    $("#share-close", root).addEventListener("click", () => this.close());
  }

  async share() {
    let created;
    try {
      created = await api.createShare(this.current());
    } catch (error) {
      this.notices.problem(error, "Could not share");
      return;
    }
    const url = $("#share-url", this.root);
    url.value = new URL(created.url, location.origin).href;
    $("#copy-status", this.root).textContent = "";
    this.root.hidden = false;
    url.focus();
    url.select();
  }

  async copy() {
    const url = $("#share-url", this.root);
    let copied = false;
    try {
      await navigator.clipboard.writeText(url.value);
      copied = true;
    } catch {
      url.select();
      copied = document.execCommand("copy");
    }
    $("#copy-status", this.root).textContent = copied ? "Copied." : "Select the link and copy it (Ctrl/⌘+C).";
  }

  close() {
    this.root.hidden = true;
  }
}
