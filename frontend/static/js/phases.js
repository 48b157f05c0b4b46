// Where a run's time went (`RunResult.phases`, measured by the server): one line under the result.

import { h } from "./dom.js";
import { isNum, seconds } from "./format.js";

const STEPS = [
  ["queued", "queued"],
  ["reference", "reference"],
  ["started", "sandbox start"],
  ["imported", "set-up and import"],
  ["compiled", "first call"],
  ["first_verdict", "check"],
];

/** "First verdict 1.91 s after submission: queued 1 ms · … ; the rest of the result 4.22 s", or null. */
export function phasesLine(phases) {
  if (!phases || !isNum(phases.first_verdict_after)) return null;
  const parts = STEPS.filter(([key]) => isNum(phases[key]) && phases[key] > 0).map(([key, name]) => `${name} ${seconds(phases[key])}`);
  const rest = isNum(phases.done) ? `; the rest of the result ${seconds(phases.done)}` : "";
  return h(
    "p",
    { class: "run-meta muted", id: "run-phases" },
    `First verdict ${seconds(phases.first_verdict_after)} after submission: ${parts.join(" · ")}${rest}.`,
  );
}
