// Page chrome: the light/dark theme toggle and the side panel's tabs (keyboard: arrow keys).

const THEME_KEY = "pp:theme";

export function setupTheme(button, storage) {
  const root = document.documentElement;
  const show = () => button.setAttribute("aria-pressed", String(root.dataset.theme === "dark"));
  button.addEventListener("click", () => {
    root.dataset.theme = root.dataset.theme === "dark" ? "light" : "dark";
    storage.set(THEME_KEY, root.dataset.theme);
    show();
  });
  // Follow the system's preference until the user picks a theme here.
  window.matchMedia?.("(prefers-color-scheme: dark)").addEventListener?.("change", (event) => {
    if (storage.get(THEME_KEY)) return;
    root.dataset.theme = event.matches ? "dark" : "light";
    show();
  });
  show();
}

let tabs = [];

export function showTab(name) {
  for (const tab of tabs) {
    const selected = tab.id === `tab-${name}`;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    const panel = document.getElementById(tab.getAttribute("aria-controls"));
    panel.hidden = !selected;
    if (selected) panel.dispatchEvent(new Event("shown")); // a panel built on first use builds now
  }
}

export function setupTabs(list) {
  tabs = [...list.querySelectorAll("[role=tab]")];
  const name = (tab) => tab.id.replace(/^tab-/, "");
  for (const tab of tabs) tab.addEventListener("click", () => showTab(name(tab)));
  list.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    const at = tabs.indexOf(document.activeElement);
    const next = tabs[(at + step + tabs.length) % tabs.length];
    showTab(name(next));
    next.focus();
    event.preventDefault();
  });
}
