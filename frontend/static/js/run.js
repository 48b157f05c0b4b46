// One run at a time, from submit to result, for the playground and the embed alike: submit the job
// (POST /api/runs), follow its Server-Sent Events until the RunResult arrives, cancel it, and say
// why when no result will come (refused, or lost). How progress and results look is each page's
// business (the hooks); the order of things is this module's.

import * as api from "./api.js";

/**
 * The body of POST /api/runs for an editor state. `lowerChips`: also check the TPU lowering for
 * these chips; `fresh`: run even if the server has the result of an identical run cached;
 * `runtime`: the JAX version to run on (GET /api/runtimes; none: the server's newest); `both`: on a TPU
 * server, natively and simulated at once (mode `both`: the two verdicts side by side).
 */
export function runRequest({ source, entry, chip, options }, { lowerChips = [], fresh = false, runtime = null, both = false } = {}) {
  const body = { source, entry, chip, mode: both ? "both" : "auto", options };
  if (lowerChips.length) body.lower_chips = lowerChips;
  if (fresh) body.fresh = true;
  if (runtime) body.runtime = runtime;
  return body;
}

/**
 * The cases of a live run after a `case` event: its result goes in the slot its index names (an
 * event without one is appended), so no case is misplaced whatever order the events arrive in.
 */
export function withCase(slots, event) {
  const next = [...slots];
  next[event.index ?? next.length] = event.result;
  return next;
}

/** The partial result shown while a run is live: status "running" and the cases checked so far. */
export function liveResult(slots, summary = "Running…") {
  return { status: "running", summary, cases: slots.filter(Boolean) };
}

export class RunControl {
  /**
   * @param {import("./notices.js").Notices} notices where a refused or lost run is explained
   * @param {{setRunning: (running: boolean) => void, event: (kind: string, data: object, live: object) => void,
   *          done: (result: object) => void, failed?: (reason: string) => void}} hooks
   *   setRunning: true from the submit, false once the result is in or none will come;
   *   event: one progress event, with the partial result so far; done: the RunResult;
   *   failed: no result will come, in a few words (the notice says the rest).
   */
  constructor(notices, hooks) {
    this.notices = notices;
    this.hooks = hooks;
    this.submitting = false;
    this.runId = null;
    this.lastId = null; // the last run submitted, kept after it is done (for "share with its result")
    this.slots = [];
  }

  /** True from the submit until the result is in (or none will come). */
  get busy() {
    return this.submitting || this.runId !== null;
  }

  /** Submit a run (a `runRequest` body) and follow it; does nothing while another is under way. */
  async start(request) {
    if (this.busy) return;
    this.submitting = true;
    this.notices.clearProblem();
    this.hooks.setRunning(true);
    let created;
    try {
      created = await api.createRun(request);
    } catch (error) {
      this.submitting = false;
      this.hooks.setRunning(false);
      this.hooks.failed?.(`Not run: ${error.title}`);
      this.notices.problem(error, "The run was refused");
      return;
    }
    this.submitting = false;
    this.runId = this.lastId = created.id;
    this.slots = [];
    api.followRun(created, (kind, data) => this.onEvent(kind, data));
  }

  /** Ask the server to stop the run; false when there is none to stop yet (it is being submitted). */
  cancel() {
    if (this.runId === null) return false;
    api.cancelRun(this.runId).catch((error) => this.notices.problem(error, "Could not cancel"));
    return true;
  }

  onEvent(kind, data) {
    if (kind === "done" || kind === "lost") {
      this.runId = null;
      this.hooks.setRunning(false);
      if (kind === "done") {
        this.hooks.done(data);
      } else {
        this.hooks.failed?.("Lost track of the run");
        this.notices.failure(`Lost track of the run: ${data.message}`);
      }
      return;
    }
    if (kind === "case" && data.result) this.slots = withCase(this.slots, data);
    this.hooks.event(kind, data, liveResult(this.slots));
  }
}
