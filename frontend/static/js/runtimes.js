// The JAX runtimes on the page: the picker a run goes to (GET /api/runtimes, newest first and the
// default), what each entry's worked solution gets on every version (GET /api/runtimes/catalog), and
// what a share made on another version says when it is opened.

import { $, h } from "./dom.js";

/** "passes on jax 0.11.2, 0.12.0.1; not on 0.10.2 (error)", or "" for an entry without a record. */
export function entryRuntimesText(rows) {
  const names = Object.keys(rows || {});
  if (!names.length) return "";
  const passes = names.filter((n) => rows[n].status === "passed");
  const fails = names.filter((n) => rows[n].status !== "passed");
  const on = passes.length ? `Worked solution passes on jax ${passes.join(", ")}` : "Worked solution passes on no installed JAX";
  return fails.length ? `${on}; not on ${fails.map((n) => `${n} (${rows[n].status})`).join(", ")}.` : `${on}.`;
}

/** The notice for a share: where it was made, where it opens, and whether that is today's JAX. */
export function shareRuntimeText(shared, newest) {
  if (shared.runtime_note) return shared.runtime_note;
  if (!shared.runtime) return "";
  if (shared.run_on === newest) return "";
  return `This link was made on jax ${shared.runtime}; it runs there (today's JAX is ${newest}).`;
}

/** Say where a share runs and, when that is not today's JAX, offer to re-run it there with a diff. */
export function showShareRuntime(notices, shared, newest, onRerun) {
  const text = shareRuntimeText(shared, newest);
  if (!text) return;
  const el = notices.show(shared.runtime_note ? "warning" : "info", text, "runtime-notice", { place: true });
  if (shared.run_on !== newest) {
    el.append(h("button", { id: "rerun-today", type: "button", onclick: () => onRerun(shared.run_on, newest) }, `Re-run on today's JAX (${newest})`));
  }
}

export class RuntimePicker {
  /** @param {HTMLSelectElement} select */
  constructor(select) {
    this.select = select;
    this.runtimes = [];
    this.catalog = {};
  }

  /** Fill the picker from GET /api/runtimes (newest first); the default is chosen. */
  build(runtimes) {
    this.runtimes = runtimes || [];
    this.select.replaceChildren(
      ...this.runtimes.map((r) =>
        r.available === false
          ? h("option", { value: r.name, disabled: true, title: r.unavailable_reason || "" }, `jax ${r.name} (unavailable)`)
          : h("option", { value: r.name, title: featuresTitle(r) }, r.default ? `jax ${r.name} (newest)` : `jax ${r.name}`),
      ),
    );
    this.select.disabled = this.runtimes.length < 2;
    this.choose(this.newest);
  }

  get newest() {
    return (this.runtimes.find((r) => r.default) || this.runtimes[0])?.name ?? null;
  }

  /** The runtime a run goes to (null before the list came: the server's default). */
  get runtime() {
    return this.select.value || null;
  }

  get names() {
    return this.runtimes.map((r) => r.name);
  }

  choose(name) {
    if (this.names.includes(name)) this.select.value = name;
  }

  /** Show under the entry's title what its worked solution gets on every version. */
  showEntry(slug) {
    const el = $("#entry-runtimes");
    if (!el) return;
    el.textContent = slug ? entryRuntimesText(this.catalog[slug]) : "";
    el.hidden = !el.textContent;
  }
}

function featuresTitle(runtime) {
  const missing = Object.entries(runtime.features || {}).filter(([, f]) => !f.available);
  return missing.length ? `Not on jax ${runtime.name}: ${missing.map(([name]) => name.replaceAll("_", " ")).join(", ")}` : `jax ${runtime.name}: every feature`;
}
