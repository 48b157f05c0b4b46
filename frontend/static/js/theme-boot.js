// Runs before the first paint (a classic, blocking script): pick the theme so the page never
// flashes the wrong one. The user's choice (the toggle) wins over the system's preference.
(function () {
  var stored = null;
  try {
    stored = localStorage.getItem("pp:theme");
  } catch (e) {
    stored = null;
  }
  var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.dataset.theme = stored === "dark" || stored === "light" ? stored : dark ? "dark" : "light";
})();
