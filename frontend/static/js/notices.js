// Notices: one-line messages above the work (info, warning, error), for the playground and the
// embed alike. The playground keeps several, each dismissable and at most one per id; the embed's
// small frame has room for one at a time, which the next replaces.

import { h } from "./dom.js";

/** The id of the notice about the last refused request (a run, a share, a cancel). */
const PROBLEM_ID = "request-error";

/** What to tell the user about a refused request (an ApiError): "what: title: detail (try again in N s)". */
export function problemText(error, what) {
  const retry = error.retryAfter ? ` (try again in ${error.retryAfter} s)` : "";
  return `${what}: ${error.title}: ${error.detail}${retry}`;
}

/**
 * How the JAX a link was made with differs from the server's, as {then, now} texts
 * ("jax 0.4.1, jaxlib 0.4.1"); null when they agree or either is unknown.
 */
export function versionDrift(versions, server) {
  const differ = ["jax", "jaxlib"].filter((k) => versions?.[k] && server?.[k] && versions[k] !== server[k]);
  if (!differ.length) return null;
  return {
    then: differ.map((k) => `${k} ${versions[k]}`).join(", "),
    now: differ.map((k) => `${k} ${server[k]}`).join(", "),
  };
}

export class Notices {
  /**
   * @param {HTMLElement} root the container (aria-live)
   * @param {{single?: boolean}} options single: one notice at a time, without a dismiss button
   */
  constructor(root, { single = false } = {}) {
    this.root = root;
    this.single = single;
  }

  /**
   * Show `text` (always as text); a notice with the same `id` is replaced. Returns the element.
   * `place`: it speaks of what is open (a share, an entry, a loaded file, a lesson step), so it goes
   * when that changes (`leavePlace`) instead of staying on screen after it stopped being true.
   */
  show(kind, text, id = null, { place = false } = {}) {
    if (this.single) this.root.replaceChildren();
    else if (id) this.remove(id);
    const el = h(
      "div",
      { class: "notice", id, role: kind === "info" ? "status" : "alert", dataset: { kind } },
      h("span", { class: "notice-text" }, text),
      this.single ? null : h("button", { type: "button", class: "icon", "aria-label": "Dismiss", onclick: () => el.remove() }, "✕"),
    );
    if (place) el.dataset.place = "1";
    this.root.append(el);
    return el;
  }

  /** Another entry, share or step is open: drop the notices that spoke of the one before. */
  leavePlace() {
    for (const el of [...this.root.children]) if (el.dataset.place === "1") el.remove();
  }

  remove(id) {
    for (const el of [...this.root.children]) if (el.id === id) el.remove();
  }

  /** Explain a refused request (an ApiError); `what` says what was refused. */
  problem(error, what) {
    return this.show("error", problemText(error, what), PROBLEM_ID);
  }

  /** A request failed in another way (the run was lost): shown where a refusal would be. */
  failure(text) {
    return this.show("error", text, PROBLEM_ID);
  }

  /** Drop the last request's problem: the user is trying again. */
  clearProblem() {
    this.remove(PROBLEM_ID);
  }
}
