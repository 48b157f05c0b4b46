// A class board (a challenge step's ranking), as the teacher's page and a student's lesson bar show
// it: nicknames only, each time labelled as what it is. The verdict ("correct") was checked by the
// trusted checker outside the kernel's process. The time is the host's own measurement on a TPU
// ("measured by the host": the kernel's exported program checked again and timed outside its process),
// or, for a simulated run, the TPU time model's estimate the kernel's own process reported
// ("reported"). SECURITY.md says why the two are kept apart.

import { h } from "./dom.js";

/** "12.3 µs", "1.20 ms". */
export function shortTime(seconds) {
  if (seconds >= 1e-3) return `${(seconds * 1e3).toPrecision(3)} ms`;
  return `${(seconds * 1e6).toPrecision(3)} µs`;
}

/** The table of `board` (from the API's `boards`). */
export function boardTable(board, { teacher = false } = {}) {
  const hidden = board.hidden ? (teacher ? " (hidden from the students)" : "") : "";
  const bases = new Set(board.rows.map((row) => row.basis));
  const basis = bases.size > 1 ? `on ${board.chip}, measured and estimated`
    : bases.has("measured") ? `measured on a ${board.chip} by the host` : `estimated on ${board.chip}`;
  return h("section", { class: "class-board", dataset: { step: board.step, hidden: board.hidden ? "1" : "0" } },
    h("h3", {}, `Class board, step ${board.step}: ${board.rows.length ? basis : `on ${board.chip}`}${hidden}`),
    board.rows.length
      ? h("table", { class: "class-board-table" },
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Nickname"),
            h("th", { scope: "col" }, "Verdict"), h("th", { scope: "col" }, "Time"))),
          h("tbody", {}, board.rows.map((row) =>
            h("tr", {},
              h("td", {}, String(row.rank)),
              h("th", { scope: "row" }, row.name),
              h("td", { class: "board-checked", title: row.verdict }, "correct (checked)"),
              h("td", { class: "board-reported", title: row.reported }, `${shortTime(row.seconds)} `,
                h("span", { class: "badge" }, row.basis === "measured" ? "measured by the host" : "reported"))))))
      : h("p", { class: "muted" }, "No correct kernel yet."),
  );
}
