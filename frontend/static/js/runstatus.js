// A run's progress where the eye is when Run was pressed: a few words next to the button (on a phone
// the result panel is far below it), and the result brought into view once it is in.

import { seconds } from "./format.js";

/** The queue's estimate of the wait (a `queued` event's `eta_seconds`) in a few words, after `lead`. */
export function waitText(eta, lead = "") {
  if (typeof eta !== "number" || eta < 1) return "";
  return `${lead}about ${eta < 90 ? `${Math.round(eta)} s` : `${Math.round(eta / 60)} min`} to wait`;
}

/** " in 2.1 s" for a run that just ran; a cached result's time is its original run's, so it says "(cached)". */
export function doneTime(result) {
  if (result.cached_from) return " (cached)";
  return result.wall_seconds ? ` in ${seconds(result.wall_seconds)}` : "";
}

/** The few words next to Run for one run event (`done`: the RunResult). */
export function runStatusText(kind, data, expected = null) {
  switch (kind) {
    case "queued":
      return `Queued (${data.position} of ${data.queued})${waitText(data.eta_seconds, ", ")}`;
    case "running":
    case "started":
    case "versions":
      return "Starting…";
    case "imported":
      return "Compiling…";
    case "compiled":
      return "Checking cases…";
    case "case":
      return `Case ${(data.index ?? 0) + 1} of ${data.of ?? expected ?? "?"}…`;
    case "timing":
    case "memory":
    case "outputs":
      return "Timing…";
    case "error":
      return "Error; finishing…";
    case "progress":
      return data.grid_steps ? `Running: ${data.grid_steps.toLocaleString("en")} grid steps…` : "Running…";
    case "lowering":
      return data.check?.lowers === false ? "TPU compiler rejects it; finishing…" : "TPU compiler checked; finishing…";
    case "done":
      return `${data.status}${doneTime(data)} ↓`;
    default:
      return "Running…";
  }
}

/** How much of the top of the window a sticky header covers (the phone layout keeps Run there). */
function coveredTop() {
  const bar = document.querySelector(".topbar");
  return bar && getComputedStyle(bar).position === "sticky" ? bar.getBoundingClientRect().bottom : 0;
}

/** Scroll the window so `el`'s top shows below any sticky header, unless it already does (`force`: anyway). */
export function showResultInView(el, force = false) {
  const top = el.getBoundingClientRect().top;
  const covered = coveredTop();
  const visible = top >= covered && top < window.innerHeight - 80;
  if (force || !visible) window.scrollTo({ top: window.scrollY + top - covered - 6, behavior: "smooth" });
}
