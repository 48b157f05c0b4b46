// A share's notebook and its measurements: "Open as notebook" downloads an .ipynb that checks and
// times the kernel on the reader's own TPU (or in interpret mode on a CPU); "Add a measurement"
// takes back the one JSON line it prints. Measurements show beside the estimate, labelled
// user-reported: the playground did not take them and cannot vouch for the machine.

import { h, fill } from "./dom.js";
import { problemText } from "./notices.js";

export class ShareMeasurements {
  /** @param {HTMLElement} root the section under the notices; hooks: {api, notices} */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.id = null;
  }

  async show(id) {
    this.id = id;
    this.root.hidden = false;
    this.render([]);
    try {
      const found = await this.hooks.api.getMeasurements(id);
      if (this.id === id) this.render(found.measurements);
    } catch (error) {
      this.hooks.notices.problem(error, "This share's measurements cannot be read");
    }
  }

  hide() {
    this.id = null;
    this.root.hidden = true;
  }

  render(measurements) {
    const line = h("textarea", { rows: 2, placeholder: "Paste the JSON line the notebook's last cell printed", "aria-label": "Measurement line" });
    const add = h("button", { type: "button", onclick: () => this.add(line) }, "Add");
    fill(
      this.root,
      h("a", { class: "button", href: this.hooks.api.notebookUrl(this.id), download: `pallas-${this.id}.ipynb`,
        title: "A Jupyter notebook that checks and times this kernel on your TPU (Colab, Kaggle, a TPU VM), or in interpret mode on a CPU" },
        "Open as notebook"),
      measurements.length
        ? h("ul", { class: "measured-list" }, measurements.map((m) =>
            h("li", { title: `${m.device_kind}, jax ${m.jax}, case ${m.case}, ${m.method}; added ${m.created.slice(0, 10)}` }, m.text)))
        : h("span", { class: "muted" }, "No measurement on a TPU yet."),
      h("details", { class: "measured-add" }, h("summary", {}, "Add a measurement"), line, add),
    );
  }

  async add(textarea) {
    const id = this.id;
    try {
      await this.hooks.api.addMeasurement(id, textarea.value);
    } catch (error) {
      this.hooks.notices.show("error", problemText(error, "The measurement was not added"), "measurement-error");
      return;
    }
    await this.show(id);
  }
}
