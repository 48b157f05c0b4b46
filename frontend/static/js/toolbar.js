// The toolbar of run settings: the chip a run targets (one button per chip the server lists at
// /api/chips) and the interpret-mode options, remembered in this browser between visits.

import { $, h } from "./dom.js";

const PREFS_KEY = "pp:prefs";
// What the server runs a request that names no chip on (RunRequest.chip in server/wire/schemas.py):
// the choice until the user makes their own.
const DEFAULT_CHIP = "v5p";
const OPTION_INPUTS = ["#opt-races", "#opt-nan", "#opt-dma", "#opt-oob", "#opt-padded", "#opt-seed"];

/** The settings saved on an earlier visit ({chip, options}); unreadable ones are dropped. */
function readPrefs(storage) {
  try {
    return JSON.parse(storage.get(PREFS_KEY) || "{}") ?? {};
  } catch {
    return {};
  }
}

export class Toolbar {
  /** @param {{get: (key: string) => string | null, set: (key: string, value: string | null) => void}} storage */
  constructor(storage) {
    this.storage = storage;
    this.names = [];
    // Read once: the chip chosen on an earlier visit wins over an entry's first chip (when allowed).
    this.prefs = readPrefs(storage);
    this.applyOptions(this.prefs.options);
    for (const id of OPTION_INPUTS) $(id).addEventListener("change", () => this.save());
  }

  /** One button per chip of `chips` (GET /api/chips), the remembered one chosen. */
  buildChips(chips) {
    this.names = chips.map((chip) => chip.name);
    $("#chips").append(
      ...this.names.map((name) =>
        h("label", { class: "segment" }, h("input", { type: "radio", name: "chip", value: name, onchange: () => this.save() }), h("span", {}, name)),
      ),
    );
    this.chooseChip(this.names.includes(this.prefs.chip) ? this.prefs.chip : DEFAULT_CHIP);
  }

  /** The names of every chip the server offers, in its order. */
  get chips() {
    return [...this.names];
  }

  get chip() {
    return $("#chips input:checked")?.value ?? DEFAULT_CHIP;
  }

  get preferredChip() {
    return this.prefs.chip;
  }

  /** Choose `chip` if it is offered and not ruled out by the entry. */
  chooseChip(chip) {
    const input = this.chipInput(chip);
    if (input && !input.disabled) input.checked = true;
  }

  /** Offer only the `allowed` chips (an entry's); if the chosen one is not among them, the first that is. */
  allowChips(allowed) {
    for (const name of this.names) this.chipInput(name).disabled = !allowed.includes(name);
    if (allowed.includes(this.chip) && $("#chips input:checked")) return;
    const first = allowed.map((name) => this.chipInput(name)).find(Boolean);
    if (first) first.checked = true;
  }

  chipInput(name) {
    return this.names.includes(name) ? $(`#chips input[value="${name}"]`) : null;
  }

  /** The interpret-mode options, as a run request carries them. */
  options() {
    const seed = $("#opt-seed").value.trim();
    return {
      detect_races: $("#opt-races").checked,
      uninitialized_memory: $("#opt-nan").checked ? "nan" : "zero",
      dma_execution_mode: $("#opt-dma").value,
      random_seed: seed === "" ? null : Number.parseInt(seed, 10),
      out_of_bounds_reads: $("#opt-oob").value,
      buffer_bounds: $("#opt-padded").checked ? "padded" : "logical",
    };
  }

  applyOptions(options = {}) {
    $("#opt-races").checked = Boolean(options.detect_races);
    $("#opt-nan").checked = options.uninitialized_memory !== "zero";
    $("#opt-dma").value = options.dma_execution_mode === "eager" ? "eager" : "on_wait";
    $("#opt-seed").value = options.random_seed ?? "";
    $("#opt-oob").value = options.out_of_bounds_reads === "uninitialized" ? "uninitialized" : "raise";
    $("#opt-padded").checked = options.buffer_bounds === "padded";
  }

  save() {
    this.storage.set(PREFS_KEY, JSON.stringify({ chip: this.chip, options: this.options() }));
  }
}
