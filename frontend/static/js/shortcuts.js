// The keyboard shortcut sheet, opened with "?" (anywhere but a text field) or the ? button, with the
// way to the HTTP API's pages and the agents' MCP config for this host.

import { $, h } from "./dom.js";
import { wireCopyButtons } from "./links.js";

export const SHORTCUTS = [
  ["Ctrl/⌘ + Enter", "Run the kernel"],
  ["Alt + → / Alt + ←", "Next / previous lesson step"],
  ["Alt + ↑ / Alt + ↓", "Move the selected step (lesson builder)"],
  ["Ctrl/⌘ + Z", "Undo (also undoes loading a template, solution or file)"],
  ["Ctrl/⌘ + F", "Search in the editor"],
  ["Esc, then Tab", "Leave the editor"],
  ["Alt + Shift + D", "Diff your code against the template"],
  ["?", "This sheet"],
];

/** True when a key typed now goes into text (the editor, an input), not to the page. */
export function typingInto(target) {
  return Boolean(target?.closest?.("input, textarea, select, [contenteditable='true'], .cm-editor"));
}

export function setupShortcuts(dialog, button) {
  $("#shortcuts", dialog).replaceChildren(
    h("tbody", {}, SHORTCUTS.map(([keys, what]) => h("tr", {}, h("th", { scope: "row" }, h("kbd", {}, keys)), h("td", {}, what)))),
  );
  $("#help-mcp", dialog).value = JSON.stringify({ mcpServers: { "pallas-playground": { type: "http", url: `${location.origin}/mcp` } } });
  $("#help-client", dialog).textContent = `pallas_playground.Client("${location.origin}")`;
  wireCopyButtons(dialog);
  const open = () => dialog.open || dialog.showModal();
  button.addEventListener("click", open);
  $("#shortcuts-close", dialog).addEventListener("click", () => dialog.close());
  document.addEventListener("keydown", (event) => {
    if (event.key === "?" && !event.ctrlKey && !event.metaKey && !event.altKey && !typingInto(event.target)) {
      event.preventDefault();
      open();
    }
  });
}
