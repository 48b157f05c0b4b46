// How the page looks, chosen in the View menu and carried in the URL so a teacher's link opens the
// same view: presentation mode (`present=1`: high contrast, everything larger), the text size of the
// whole page (`size=140`: editor, notes, results and trace scale together), line wrap (`wrap=1`) and
// the panels shown (`hide=toolbar,entry,readme,reference,ir,trace,tune,history,log,hint`). Text size and
// wrap are also remembered in this browser for pages opened without them. Everything here is CSS
// driven by attributes on <html>; nothing is re-rendered but the editor's measurements.

import { $, h } from "./dom.js";

export const PARTS = ["toolbar", "entry", "readme", "reference", "trace", "ir", "tune", "history", "log", "hint"];
const PART_NAMES = {
  toolbar: "Run settings", entry: "Entry description", readme: "README tab", reference: "Reference tab",
  trace: "Trace tab", ir: "IR tab", tune: "Tune tab", history: "History tab", log: "Run log", hint: "Keyboard hint",
};
const VIEW_KEY = "pp:view";
const SIZES = [80, 90, 100, 110, 120, 130, 140, 150, 160, 180, 200];
const PRESENT_SIZE = 140;
const VIEW_PARAMS = ["present", "hide", "size", "wrap"];

/** The view a URL's query asks for, over the remembered defaults: {present, hidden, size, wrap}. */
export function viewFromSearch(search, remembered = {}) {
  const params = new URLSearchParams(search);
  const present = params.get("present") === "1";
  const wanted = (params.get("hide") || "").split(",").map((p) => p.trim().toLowerCase());
  const asked = Number.parseInt(params.get("size") ?? "", 10);
  const size = SIZES.includes(asked) ? asked : present ? PRESENT_SIZE : SIZES.includes(remembered.size) ? remembered.size : 100;
  // A phone wraps long lines unless told otherwise (sideways scrolling on a touch screen loses the line).
  const narrow = typeof matchMedia === "function" && matchMedia("(max-width: 820px)").matches;
  const wrap = params.has("wrap") ? params.get("wrap") === "1" : present || (remembered.wrap ?? narrow);
  return { present, hidden: PARTS.filter((p) => wanted.includes(p)), size, wrap };
}

/** `search` with the view's parameters set to `view` (defaults left out), other parameters kept. */
export function searchWithView(search, view) {
  const params = new URLSearchParams(search);
  for (const key of VIEW_PARAMS) params.delete(key);
  if (view.present) params.set("present", "1");
  if (view.hidden.length) params.set("hide", view.hidden.join(","));
  if (view.size !== (view.present ? PRESENT_SIZE : 100)) params.set("size", String(view.size));
  if (view.wrap !== view.present) params.set("wrap", view.wrap ? "1" : "0");
  const query = params.toString();
  return query ? `?${query}` : "";
}

/** A next text size, one step `by` (+1 / -1) from `size`. */
export function nextSize(size, by) {
  const at = SIZES.indexOf(size);
  return SIZES[Math.max(0, Math.min(SIZES.length - 1, (at < 0 ? SIZES.indexOf(100) : at) + by))];
}

// On a wide projector a lesson's bar (its title, steps and note) goes to the top of the side pane:
// above the code it left 12 rows of code at 1280×720 and cut the note; beside it, the code keeps its
// 20 rows and the note shows whole. Elsewhere it stays above the code.
const WIDE = "(min-width: 821px)";
function placeLessonBar(present) {
  const bar = document.getElementById("lesson-bar");
  const home = document.querySelector(present && matchMedia(WIDE).matches ? ".pane-side" : ".pane-code");
  if (bar && home && bar.parentElement !== home) home.prepend(bar);
}

export class View {
  /**
   * @param {{storage: object, editors: () => object[], onChange?: () => void}} hooks
   *   editors: the editors to re-measure and wrap; onChange: the view changed (the page re-lays out)
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.view = viewFromSearch(location.search, this.remembered());
    this.menu = $("#view-menu");
    this.buildMenu();
    $("#view-button").addEventListener("click", () => this.toggleMenu());
    matchMedia(WIDE).addEventListener("change", () => placeLessonBar(this.view.present));
    $("#present").addEventListener("click", () => this.set({ present: !this.view.present, size: this.view.present ? 100 : PRESENT_SIZE, wrap: !this.view.present }));
    document.addEventListener("click", (event) => {
      if (!this.menu.hidden && !this.menu.contains(event.target) && !$("#view-button").contains(event.target)) this.toggleMenu(false);
    });
    this.apply();
  }

  remembered() {
    try {
      return JSON.parse(this.hooks.storage.get(VIEW_KEY) || "{}") ?? {};
    } catch {
      return {};
    }
  }

  get wrap() {
    return this.view.wrap;
  }

  /** Change part of the view; the URL and the page follow. */
  set(changes) {
    this.view = { ...this.view, ...changes };
    if (!this.view.present) this.hooks.storage.set(VIEW_KEY, JSON.stringify({ size: this.view.size, wrap: this.view.wrap }));
    history.replaceState(history.state, "", `${location.pathname}${searchWithView(location.search, this.view)}${location.hash}`);
    this.apply();
  }

  /** Re-read the view from the URL (after Back / Forward). */
  reload() {
    this.view = viewFromSearch(location.search, this.remembered());
    this.apply();
  }

  /** A path of this site with the current view's parameters added (for the page's own links). */
  carry(url) {
    const next = new URL(url, location.origin);
    const search = searchWithView(next.search, this.view);
    return `${next.pathname}${search}${next.hash}`;
  }

  apply() {
    const root = document.documentElement;
    const { present, hidden, size, wrap } = this.view;
    if (present) root.dataset.present = "1";
    else delete root.dataset.present;
    placeLessonBar(present);
    root.dataset.hide = hidden.join(" ");
    root.style.setProperty("--page-zoom", String(size / 100));
    for (const part of PARTS) {
      const tab = document.getElementById(`tab-${part}`);
      if (tab) tab.hidden = hidden.includes(part);
    }
    $("#present").setAttribute("aria-pressed", String(present));
    $("#view-present").checked = present;
    $("#view-wrap").checked = wrap;
    $("#size-value").textContent = `${size}%`;
    for (const box of this.menu.querySelectorAll("input[data-part]")) box.checked = !hidden.includes(box.dataset.part);
    for (const editor of this.hooks.editors()) {
      editor.setWrap(wrap);
      editor.refresh();
    }
    this.hooks.onChange?.();
  }

  toggleMenu(open = this.menu.hidden) {
    this.menu.hidden = !open;
    $("#view-button").setAttribute("aria-expanded", String(open));
    if (open) $("#view-present").focus();
  }

  buildMenu() {
    const parts = PARTS.map((part) =>
      h("label", {}, h("input", { type: "checkbox", dataset: { part }, onchange: (e) => this.showPart(part, e.target.checked) }), ` ${PART_NAMES[part]}`),
    );
    $("#view-parts").replaceChildren(...parts);
    $("#view-present").addEventListener("change", (e) => this.set({ present: e.target.checked, size: e.target.checked ? PRESENT_SIZE : 100, wrap: e.target.checked }));
    $("#view-wrap").addEventListener("change", (e) => this.set({ wrap: e.target.checked }));
    $("#size-down").addEventListener("click", () => this.set({ size: nextSize(this.view.size, -1) }));
    $("#size-up").addEventListener("click", () => this.set({ size: nextSize(this.view.size, 1) }));
    this.menu.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        this.toggleMenu(false);
        $("#view-button").focus();
      }
    });
  }

  showPart(part, shown) {
    const hidden = shown ? this.view.hidden.filter((p) => p !== part) : [...new Set([...this.view.hidden, part])];
    this.set({ hidden: PARTS.filter((p) => hidden.includes(p)) });
  }
}
