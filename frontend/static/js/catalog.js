// The catalog picker (a dialog of entries grouped by level, with their concepts) and the
// description of the selected entry: title, concepts, README, reference, wrong kernels.

import { $, h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

const LEVELS = ["beginner", "intermediate", "advanced"];

const SCRATCH_README = `## Scratch mode

No catalog entry: your file is the whole problem. Define

- \`make_inputs(seed)\`: a tuple of input arrays;
- \`kernel(*inputs)\`: your Pallas kernel (written as for a TPU);
- \`reference(*inputs)\` (optional): plain \`jax.numpy\`. With it, the outputs are compared
  element by element; without it the run just shows what came out (status **ran**).`;

function tags(items, className = "tag") {
  return items.map((item) => h("li", { class: className }, item));
}

function card(entry, onPick) {
  return h(
    "li",
    {},
    h(
      "button",
      { type: "button", class: "entry-card", dataset: { slug: entry.slug }, onclick: () => onPick(entry.slug) },
      h("span", { class: "entry-card-title" }, entry.title),
      h("span", { class: "entry-card-summary" }, entry.summary),
      h("ul", { class: "tags", "aria-label": "Concepts" }, tags(entry.concepts || [])),
      h("span", { class: "entry-card-chips muted" }, `chips: ${(entry.chips || []).join(", ")}${entry.devices > 1 ? ` · ${entry.devices} devices` : ""}`),
    ),
  );
}

/**
 * Fill the catalog dialog. `chips`: the names of every chip the server offers (a scratch file may
 * target any); `onPick(slug | null)`, where null is scratch mode.
 */
export function renderCatalog(root, entries, chips, onPick) {
  const levels = [...LEVELS, ...new Set(entries.map((e) => e.level).filter((l) => !LEVELS.includes(l)))];
  const groups = levels
    .map((level) => [level, entries.filter((e) => e.level === level)])
    .filter(([, list]) => list.length)
    .map(([level, list]) =>
      h("section", { class: "level", dataset: { level } }, h("h3", {}, level), h("ul", { class: "cards" }, list.map((e) => card(e, onPick)))),
    );
  const scratch = h(
    "section",
    { class: "level", dataset: { level: "scratch" } },
    h("h3", {}, "your own"),
    h(
      "ul",
      { class: "cards" },
      card({ slug: "", title: "Scratch file", summary: "Any kernel, with your own inputs and reference.", concepts: [], chips }, () => onPick(null)),
    ),
  );
  const concepts = [...new Set(entries.flatMap((e) => e.concepts || []))].sort((a, b) => a.localeCompare(b));
  const filter = h("input", { type: "search", id: "catalog-filter", placeholder: "Filter by name or concept, e.g. emit_pipeline", "aria-label": "Filter the catalog", list: "catalog-concepts" });
  const none = h("p", { class: "muted", id: "catalog-none", hidden: true }, "No entry matches.");
  filter.addEventListener("input", () => applyFilter(root, filter.value, none));
  root.replaceChildren(
    filter,
    h("datalist", { id: "catalog-concepts" }, concepts.map((c) => h("option", { value: c }))),
    none,
    ...groups,
    scratch,
  );
}

/** Show only the cards whose title, summary or concepts contain every word of `query`. */
function applyFilter(root, query, none) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const section of root.querySelectorAll("section.level")) {
    let visible = 0;
    for (const item of section.querySelectorAll(".cards > li")) {
      const text = item.textContent.toLowerCase();
      const match = words.every((w) => text.includes(w));
      item.hidden = !match;
      if (match) visible += 1;
    }
    section.hidden = visible === 0;
    if (section.dataset.level !== "scratch") shown += visible;
  }
  none.hidden = shown > 0 || !words.length;
}

/** Describe the selected entry (null: scratch mode) in the page. */
export function renderEntryInfo(entry, reference) {
  $("#catalog-current").textContent = entry ? entry.title : "Scratch file";
  $("#entry-title").textContent = entry ? entry.title : "Scratch file";
  $("#entry-summary").textContent = entry ? entry.summary : "Your own make_inputs, kernel and (optional) reference.";
  $("#entry-concepts").replaceChildren(...(entry ? [h("li", { class: "tag level" }, entry.level), ...tags(entry.concepts)] : []));
  $("#solution").disabled = !entry;
  const wrong = $("#wrong");
  wrong.replaceChildren(
    h("option", { value: "" }, entry?.wrong?.length ? "Load a wrong kernel…" : "No wrong kernels"),
    ...(entry?.wrong || []).map((w) => h("option", { value: w.name }, w.name.replaceAll("_", " "))),
  );
  wrong.disabled = !entry?.wrong?.length;
  $("#readme").replaceChildren(renderMarkdown(entry ? entry.readme : SCRATCH_README));
  const docs = $("#docs");
  docs.replaceChildren();
  if (entry?.docs && /^https?:/.test(entry.docs)) {
    docs.append("Docs: ", h("a", { href: entry.docs, rel: "noopener noreferrer", target: "_blank" }, entry.docs));
  }
  $("#reference-note").textContent = entry
    ? `reference.py of ${entry.slug} (read-only): makes the inputs and the expected outputs.${entry.interpret_notes ? ` ${entry.interpret_notes}` : ""}`
    : "Scratch mode: the reference() in your own file is the reference.";
  reference.setValue(entry ? entry.reference : "");
}
