// Presentation mode, for a teacher at a projector: large fonts, a high-contrast palette, and only
// the panels the URL asks for. `?present=1` turns it on (or the Present button, which keeps the
// URL in step so the link can be handed around); `hide=toolbar,entry,readme,reference,ir,trace,log,hint` hides
// parts of the page. Everything here is CSS driven by attributes on <html>; nothing is re-rendered.

const HIDEABLE = ["toolbar", "entry", "readme", "reference", "ir", "trace", "log", "hint"];

function params() {
  return new URLSearchParams(location.search);
}

/** The parts of the page `hide=` names (unknown names are ignored). */
export function hiddenParts(search = params()) {
  const wanted = (search.get("hide") || "").split(",").map((p) => p.trim().toLowerCase());
  return HIDEABLE.filter((part) => wanted.includes(part));
}

function apply(on) {
  const root = document.documentElement;
  if (on) root.dataset.present = "1";
  else delete root.dataset.present;
  const hidden = on ? hiddenParts() : [];
  root.dataset.hide = hidden.join(" ");
  for (const part of HIDEABLE) {
    const tab = document.getElementById(`tab-${part}`);
    if (tab) tab.hidden = hidden.includes(part);
  }
}

/** Wire the Present button and apply what the URL asks for. */
export function setupPresentation(button) {
  const on = () => params().get("present") === "1";
  const show = () => button.setAttribute("aria-pressed", String(on()));
  button.addEventListener("click", () => {
    const search = params();
    if (on()) search.delete("present");
    else search.set("present", "1");
    const query = search.toString();
    history.replaceState(null, "", `${location.pathname}${query ? `?${query}` : ""}`);
    apply(on());
    show();
  });
  apply(on());
  show();
}

/** Keep `present` and `hide` when the page rewrites its own URL (switching entries, steps). */
export function carryPresentation(url) {
  const search = params();
  const next = new URL(url, location.origin);
  for (const key of ["present", "hide"]) if (search.has(key)) next.searchParams.set(key, search.get(key));
  return `${next.pathname}${next.search}`;
}
