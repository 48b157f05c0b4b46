// Where the page is: an entry (/?entry=slug), a scratch file (/?scratch), a share (/s/{id}) or a
// step of a lesson (/l/{id}?step=k, a revision pinned by ?rev=n). Moving to another entry or step
// is a browser history entry (pushState), so Back and Forward walk between them; popstate puts the
// page back. A lesson opened from its stable link stays on the revision it opened, across reloads
// too (the revision rides in history.state), and says when the teacher has saved a newer one.
// The author's edit link carries the token in its fragment: kept in this browser, then removed
// from the address bar (a projector shows it).

import { h } from "./dom.js";
import { versionDrift } from "./notices.js";

/** What a location names: {kind: "share"|"lesson"|"entry"|"scratch", id, revision, step, slug}. */
export function placeOf(pathname, search) {
  const params = new URLSearchParams(search);
  const decode = (raw) => {
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  };
  const share = /^\/s\/([^/]+)$/.exec(pathname);
  if (share) return { kind: "share", id: decode(share[1]) };
  const lesson = /^\/l\/([^/]+)$/.exec(pathname);
  if (lesson) {
    const revision = Number.parseInt(params.get("rev") ?? "", 10);
    const step = Number.parseInt(params.get("step") ?? "1", 10);
    return { kind: "lesson", id: decode(lesson[1]), revision: revision > 0 ? revision : null, step: step > 0 ? step : 1 };
  }
  if (params.has("scratch")) return { kind: "scratch" };
  return { kind: "entry", slug: params.get("entry") };
}

export class Places {
  constructor(hooks) {
    this.hooks = hooks;
    this.lesson = null; // the LessonPlayer of the lesson open, if one is
    this.results = new Map(); // lesson step -> the last result shown on it
    window.addEventListener("popstate", () => this.openFromLocation({ back: true }));
  }

  /** Go somewhere new as a history entry: `open()` changes the page, `url` is where it now is. */
  async visit(open, url) {
    this.leaveLesson();
    this.hooks.measured?.hide();
    await open();
    history.pushState({ place: url }, "", this.hooks.view.carry(url));
  }

  /** Open what the address bar names (start-up, Back, Forward). */
  async openFromLocation({ back = false } = {}) {
    const place = placeOf(location.pathname, location.search);
    this.hooks.view.reload();
    this.hooks.measured?.hide();
    if (place.kind === "lesson") {
      const pinned = place.revision ?? (history.state?.lesson === place.id ? history.state.revision : null);
      if (back && this.lesson?.lesson.id === place.id && this.lesson.lesson.revision === (pinned ?? this.lesson.lesson.revision)) {
        await this.lesson.go(place.step - 1, { quiet: true });
        return;
      }
      if (await this.openLesson(place.id, pinned, place.step)) return;
    }
    this.leaveLesson();
    if (place.kind === "share" && (await this.openShare(place.id))) return;
    const catalog = this.hooks.catalog();
    const wanted = place.kind === "scratch" ? null : place.slug ?? catalog[0]?.slug ?? null;
    await this.hooks.selectEntry(catalog.some((e) => e.slug === wanted) ? wanted : null);
    this.hooks.toolbar.chooseChip(this.hooks.toolbar.preferredChip);
  }

  async openShare(id) {
    let shared;
    try {
      shared = await this.hooks.api.getShare(id);
    } catch (error) {
      this.hooks.notices.problem(error, "This share link cannot be opened");
      return false;
    }
    await this.hooks.openState(shared);
    this.hooks.measured?.show(shared.id);
    const created = shared.created ? `, shared ${shared.created.slice(0, 10)}` : "";
    this.hooks.notices.show("info", `Opened shared link ${shared.id}${created} (${shared.entry ?? "scratch"} on ${shared.chip}).`, "share-notice", { place: true });
    // A share runs on the JAX it was made on while that is installed (the runtime picker says which).
    if (shared.run_on && this.hooks.onShare) this.hooks.onShare(shared);
    else this.checkVersions(shared.versions);
    if (shared.result) {
      const jax = shared.result.versions?.jax ? `, jax ${shared.result.versions.jax}` : "";
      this.hooks.showResult(shared.result, `Result from ${(shared.result_at ?? shared.created).slice(0, 10)}${jax}, kept with this link. Run it to check it again.`);
    }
    return true;
  }

  async openLesson(id, revision, step) {
    // The lesson player (and the class session's part, `loadClass`) come with the first lesson
    // opened: a page without a lesson never needs them, and the first visit is lighter.
    const [{ LessonPlayer, keepLessonToken, lessonToken }] = await Promise.all([import("./lesson.js"), this.hooks.loadClass?.()]);
    const token = /^#edit=([\w-]+)$/.exec(location.hash)?.[1];
    if (token) {
      keepLessonToken(this.hooks.storage, id, token);
      history.replaceState(history.state, "", `${location.pathname}${location.search}`);
    }
    let lesson;
    try {
      lesson = await this.hooks.api.getLesson(id, revision);
    } catch (error) {
      this.hooks.notices.problem(error, "This lesson link cannot be opened");
      return false;
    }
    this.leaveLesson();
    const editable = lesson.editable && lessonToken(this.hooks.storage, id);
    this.lesson = new LessonPlayer(this.hooks.rootLesson ?? document.getElementById("lesson-bar"), lesson, {
      load: (s, source, index) => this.loadStep(s, source, index),
      storage: this.hooks.storage,
      onStep: (index) => this.stepped(index),
      onNewer: (latest) => this.newer(latest),
      onEdit: editable ? () => this.edit(id) : null,
      classPart: this.hooks.classPart,
      onEdited: this.hooks.classEdited,
    });
    await this.lesson.go(step - 1, { quiet: true });
    const url = `/l/${encodeURIComponent(id)}?${revision ? `rev=${lesson.revision}&` : ""}step=${this.lesson.index + 1}`;
    history.replaceState({ lesson: id, revision: lesson.revision, place: url }, "", this.hooks.view.carry(url));
    this.checkVersions(lesson.versions);
    if (token && editable) await this.edit(id);
    return true;
  }

  async edit(id) {
    try {
      this.hooks.builder.edit(await this.hooks.api.getLesson(id));
    } catch (error) {
      this.hooks.notices.problem(error, "Could not open the lesson for editing");
    }
  }

  /** The student moved to another step: a history entry, so Back returns to the step before. */
  stepped(index) {
    const lesson = this.lesson.lesson;
    const pinned = new URLSearchParams(location.search).has("rev");
    const url = `/l/${encodeURIComponent(lesson.id)}?${pinned ? `rev=${lesson.revision}&` : ""}step=${index + 1}`;
    history.pushState({ lesson: lesson.id, revision: lesson.revision, place: url }, "", this.hooks.view.carry(url));
  }

  stepKey(index) {
    const lesson = this.lesson?.lesson;
    return lesson ? `${lesson.id}:${lesson.revision}:${index}` : null;
  }

  /** The result a run gave on the current lesson step, shown again when the student comes back. */
  rememberResult(result) {
    const key = this.stepKey(this.lesson?.index);
    if (key) this.results.set(key, result);
  }

  async loadStep(step, source, index) {
    await this.hooks.openState({ ...step, source });
    const kept = this.results.get(this.stepKey(index));
    if (kept) this.hooks.showResult(kept, "Your last result on this step; run it to check it again.");
  }

  newer(latest) {
    const current = this.lesson.lesson;
    const el = this.hooks.notices.show(
      "warning",
      `The teacher saved a newer revision (${latest.revision}) of this lesson. You are on revision ${current.revision}: nothing changes until you open it; your edits stay with this revision.`,
      "lesson-newer",
    );
    el.querySelector(".notice-text").append(" ", h("a", { href: `/l/${encodeURIComponent(current.id)}?rev=${latest.revision}`, id: "open-newer" }, `Open revision ${latest.revision}`));
  }

  leaveLesson() {
    if (!this.lesson) return;
    this.lesson.stop();
    this.lesson = null;
    const bar = document.getElementById("lesson-bar");
    bar.hidden = true;
    bar.replaceChildren();
    this.hooks.notices.remove("lesson-newer");
  }

  checkVersions(versions) {
    const drift = versionDrift(versions, this.hooks.server());
    if (!drift) return;
    this.hooks.notices.show("warning", `This link was made on a server running ${drift.then}; this one runs ${drift.now}. Results may differ.`, "version-notice", { place: true });
  }
}
