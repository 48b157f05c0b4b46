// The only module that talks to the server (fetch and EventSource). Everything else gets plain
// data back, or an ApiError carrying the server's RFC 9457 problem details.

const CLIENT_KEY = "pp:client";

/** A request the server refused (problem+json), or no answer at all (status 0). */
export class ApiError extends Error {
  constructor(status, problem, retryAfter = null) {
    const title = problem?.title || (status ? `HTTP ${status}` : "Network error");
    const detail = problem?.detail || (status ? "the server refused the request" : "the server did not answer");
    super(`${title}: ${detail}`);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

function randomId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A per-browser id, so the run queue can be fair between browsers behind one address. */
function clientId() {
  try {
    let id = localStorage.getItem(CLIENT_KEY);
    if (!id) localStorage.setItem(CLIENT_KEY, (id = randomId()));
    return id;
  } catch {
    return "";
  }
}

async function request(method, url, body, extraHeaders = {}) {
  const headers = { Accept: "application/json, application/problem+json", ...extraHeaders };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST" || method === "PUT") headers["X-Playground-Client"] = clientId();
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, null);
  }
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") ? await response.json().catch(() => null) : null;
  if (!response.ok) throw new ApiError(response.status, data, response.headers.get("retry-after"));
  return data;
}

const enc = encodeURIComponent;

export const getCatalog = () => request("GET", "/api/catalog");
export const getEntry = (slug) => request("GET", `/api/catalog/${enc(slug)}`);
export const getVersion = () => request("GET", "/api/version");
export const getChips = () => request("GET", "/api/chips");
export const createRun = (run) => request("POST", "/api/runs", run);
export const getRun = (id) => request("GET", `/api/runs/${enc(id)}`);
export const cancelRun = (id) => request("DELETE", `/api/runs/${enc(id)}`);
export const createShare = (share) => request("POST", "/api/shares", share);
export const getShare = (id) => request("GET", `/api/shares/${enc(id)}`);
export const notebookUrl = (id) => `/api/shares/${enc(id)}/notebook`;
export const getMeasurements = (id) => request("GET", `/api/shares/${enc(id)}/measurements`);
export const addMeasurement = (id, line) => request("POST", `/api/shares/${enc(id)}/measurements`, { line });

// The events a run's and a sweep's followers get: the same lists as the server's
// (`sandbox/protocol/events.py` RUN_STREAM_KINDS and SWEEP_STREAM_KINDS; a test compares them).
const EVENT_KINDS = [
  "queued", "running", "started", "versions", "imported", "progress", "compiled", "case",
  "outputs", "timing", "memory", "lowering", "error", "done",
];

/**
 * Follow a run's Server-Sent Events. `onEvent(kind, data)` gets each event; the last is `done`
 * with the RunResult. If the stream is lost for good, the run is polled until it is done.
 * Returns `{close()}`.
 */
export function followRun(run, onEvent) {
  return followEvents(run.events_url, EVENT_KINDS, () => getRun(run.id), onEvent);
}

/** Follow `eventsUrl` for `kinds` until `done`; when the stream is lost for good, poll `getState()`. */
function followEvents(eventsUrl, kinds, getState, onEvent) {
  let finished = false;
  let timer = null;
  const source = new EventSource(eventsUrl);
  const finish = () => {
    finished = true;
    source.close();
    clearTimeout(timer);
  };
  for (const kind of kinds) {
    source.addEventListener(kind, (event) => {
      if (finished) return;
      let data = {};
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      if (kind === "done") finish();
      onEvent(kind, data);
    });
  }
  const poll = async () => {
    if (finished) return;
    try {
      const state = await getState();
      if (state.state === "done" && state.result) {
        finish();
        onEvent("done", state.result);
        return;
      }
    } catch (error) {
      if (error.status === 404) {
        finish();
        onEvent("lost", { message: error.message });
        return;
      }
    }
    timer = setTimeout(poll, 1000);
  };
  // CONNECTING after an error: the browser reconnects by itself (the server replays what was
  // missed, by Last-Event-ID). CLOSED: it gave up, so fall back to polling.
  source.onerror = () => {
    if (!finished && source.readyState === EventSource.CLOSED) poll();
  };
  return { close: finish };
}

export const createLesson = (lesson) => request("POST", "/api/lessons", lesson);
/** Save `lesson` as the next revision of lesson `id`; `token`: its edit token. */
export const reviseLesson = (id, lesson, token) => request("PUT", `/api/lessons/${enc(id)}`, lesson, { "X-Lesson-Token": token });
/** The lesson's latest revision, or revision `revision` when given. */
export const getLesson = (id, revision = null) =>
  request("GET", revision ? `/api/lessons/${enc(id)}/revisions/${enc(revision)}` : `/api/lessons/${enc(id)}`);
export const getLessonRevisions = (id) => request("GET", `/api/lessons/${enc(id)}/revisions`);

// -- class sessions: a teacher's class on a lesson, students joining it, the teacher's grid

export const createClass = (lesson) => request("POST", "/api/classes", lesson);
export const joinClass = (code, name) => request("POST", `/api/classes/${enc(code)}/join`, { name });
const teacher = (token) => ({ Authorization: `Bearer ${token}` });
export const getClassProgress = (id, token) => request("GET", `/api/classes/${enc(id)}/progress`, undefined, teacher(token));
export const removeStudent = (id, student, token) => request("DELETE", `/api/classes/${enc(id)}/students/${enc(student)}`, undefined, teacher(token));
export const renameStudent = (id, student, name, token) => request("PATCH", `/api/classes/${enc(id)}/students/${enc(student)}`, { name }, teacher(token));
/** The students' pages move to `step` (null: stop asking them). */
export const setFollow = (id, step, token) => request("PUT", `/api/classes/${enc(id)}/follow`, { step }, teacher(token));
export const clearHands = (id, token) => request("DELETE", `/api/classes/${enc(id)}/hands`, undefined, teacher(token));
export const lowerHand = (id, student, token) => request("DELETE", `/api/classes/${enc(id)}/hands/${enc(student)}`, undefined, teacher(token));
/** Close the class to new students or open it, and set how many one address may have (`{open, per_address}`). */
export const setClassJoins = (id, joins, token) => request("PUT", `/api/classes/${enc(id)}/joins`, joins, teacher(token));
/** Make a step an exercise, an assignment `{deadline}` or a challenge `{chip, board_hidden}`. */
export const setUpStep = (id, step, setup, token) => request("PUT", `/api/classes/${enc(id)}/steps/${enc(step)}`, setup, teacher(token));
// A student's own calls carry their student token the same way.
export const setHand = (id, raised, token) => request("PUT", `/api/classes/${enc(id)}/hand`, { raised }, teacher(token));
export const reportEditing = (id, step, token) => request("POST", `/api/classes/${enc(id)}/editing`, { step }, teacher(token));

/**
 * Follow a class's live view: `path` is `/api/classes/{id}/events` (the teacher's grid) or `/live` (a
 * student's page); `onView(view)` gets each whole view. Read with fetch, since EventSource cannot send
 * the token's header. Reconnects by itself; `onTrouble(error | null)` says when it is cut off and back.
 * A refused token (401/403/404) ends it. Returns `{close()}`.
 */
export function followClass(path, token, onView, onTrouble = () => {}) {
  const controller = new AbortController();
  let closed = false;
  const read = async (response) => {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const data = buffer.slice(0, end).split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n");
        buffer = buffer.slice(end + 2);
        if (data) onView(JSON.parse(data));
      }
    }
  };
  const loop = async () => {
    for (let delay = 1000; !closed; delay = Math.min(delay * 2, 10000)) {
      try {
        const response = await fetch(path, { headers: { ...teacher(token), Accept: "text/event-stream" }, signal: controller.signal });
        if (!response.ok) {
          onTrouble(new ApiError(response.status, await response.json().catch(() => null)));
          if ([401, 403, 404].includes(response.status)) return;
        } else {
          onTrouble(null);
          delay = 500;
          await read(response);
        }
      } catch {
        if (closed) return;
        onTrouble(new ApiError(0, null));
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };
  loop();
  return { close() { closed = true; controller.abort(); } };
}

/** The class grid as CSV text (the teacher's token travels in a header, so a plain link cannot fetch it). */
export async function getClassCsv(id, token) {
  let response;
  try {
    response = await fetch(`/api/classes/${enc(id)}/progress.csv`, { headers: teacher(token) });
  } catch {
    throw new ApiError(0, null);
  }
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  return response.text();
}

// -- sweeps ("Tune"): one sweep over shard runs; its events are its own (see server/routes/sweeps.py)

export const createSweep = (sweep) => request("POST", "/api/sweeps", sweep);
export const getSweep = (id) => request("GET", `/api/sweeps/${enc(id)}`);
export const cancelSweep = (id) => request("DELETE", `/api/sweeps/${enc(id)}`);

const SWEEP_EVENTS = ["queued", "running", "config", "error", "done"];

/** Follow a sweep's events like `followRun`: `onEvent(kind, data)`, the last is `done`. Returns `{close()}`. */
export function followSweep(sweep, onEvent) {
  return followEvents(sweep.events_url, SWEEP_EVENTS, () => getSweep(sweep.id), onEvent);
}

// -- JAX runtimes: the installed ones, a kernel on all of them (a matrix), the diff of two of its runs

export const getRuntimes = () => request("GET", "/api/runtimes");
export const getCatalogRuntimes = () => request("GET", "/api/runtimes/catalog");
export const createMatrix = (matrix) => request("POST", "/api/matrices", matrix);
export const getMatrix = (id) => request("GET", `/api/matrices/${enc(id)}`);
export const getMatrixDiff = (id, older, newer) =>
  request("GET", `/api/matrices/${enc(id)}/diff?older=${enc(older)}&newer=${enc(newer)}`);

