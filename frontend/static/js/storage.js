// This browser's storage (drafts, preferences, lesson edits) through one door that never throws:
// in private mode, or with storage turned off, nothing persists, and the page works all the same.

export const storage = {
  get(key) {
    try {
      return localStorage.getItem(key);
    } catch {
      return null;
    }
  },
  /** Keep `value` under `key`; null forgets it. */
  set(key, value) {
    try {
      if (value === null) localStorage.removeItem(key);
      else localStorage.setItem(key, value);
    } catch {
      /* nothing persists, and that is fine */
    }
  },
};
