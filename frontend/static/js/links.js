// Links a teacher hands around: copy buttons for every link, and the iframe snippet that embeds a
// share (/embed/{id}) or a lesson (/embed/l/{id}) in a course page.

import { $ } from "./dom.js";

/** Copy `text`; true when it reached the clipboard (or the browser's own copy command took it). */
export async function copyText(text, fallbackInput = null) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (!fallbackInput) return false;
    fallbackInput.select();
    return document.execCommand("copy");
  }
}

/**
 * Wire every `button[data-copy]` under `root`: it copies the value of the field its `data-copy`
 * selector names, and says so in the nearest `.copy-status`.
 */
export function wireCopyButtons(root) {
  root.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-copy]");
    if (!button) return;
    const field = $(button.dataset.copy, root) ?? $(button.dataset.copy);
    const copied = await copyText(field.value, field);
    const status = button.parentElement.querySelector(".copy-status") ?? root.querySelector(".copy-status");
    if (status) status.textContent = copied ? "Copied." : "Select it and copy (Ctrl/⌘+C).";
    button.dataset.copied = copied ? "1" : "0";
  });
}

const escapeAttr = (text) => String(text).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/**
 * The HTML a course page pastes to embed a share or a lesson: {kind: "share" | "lesson", id,
 * origin, readOnly, title}. The id goes through encodeURIComponent and the title is escaped.
 */
export function embedSnippet({ kind, id, origin, readOnly = false, title = "" }) {
  const path = kind === "lesson" ? `/embed/l/${encodeURIComponent(id)}` : `/embed/${encodeURIComponent(id)}`;
  const src = `${origin}${path}${readOnly ? "?readonly=1" : ""}`;
  const name = title || (kind === "lesson" ? "Pallas Playground lesson" : "Pallas Playground kernel");
  const height = kind === "lesson" ? 640 : 520;
  return `<iframe src="${escapeAttr(src)}" title="${escapeAttr(name)}" width="100%" height="${height}" loading="lazy" style="border:1px solid #ccc;border-radius:6px"></iframe>`;
}

export class EmbedDialog {
  constructor(dialog) {
    this.dialog = dialog;
    this.target = null;
    $("#embed-close", dialog).addEventListener("click", () => dialog.close());
    $("#embed-readonly", dialog).addEventListener("change", () => this.render());
    wireCopyButtons(dialog);
  }

  /** Show the snippet for {kind, id, title}. */
  open(target) {
    this.target = target;
    $("#embed-what", this.dialog).textContent =
      target.kind === "lesson"
        ? "The lesson, step by step, runnable in a frame of your course page (it follows the lesson's latest revision)."
        : "This kernel, runnable in a frame of your course page.";
    this.dialog.querySelector(".copy-status").textContent = "";
    this.render();
    this.dialog.showModal();
    $("#embed-snippet", this.dialog).select();
  }

  render() {
    const readOnly = $("#embed-readonly", this.dialog).checked;
    $("#embed-snippet", this.dialog).value = embedSnippet({ ...this.target, origin: location.origin, readOnly });
  }
}
