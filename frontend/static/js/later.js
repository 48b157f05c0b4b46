// Parts of the page made only when first used (the Tune panel, the lesson builder): their modules are
// imported then, not with the page, so a first visit downloads only what shows the editor.

/** `make()` (async: it imports the part's module and builds it) runs once, on the first `get()`. */
export function onDemand(make) {
  let made = null;
  return {
    get: () => (made ??= make()),
    /** The part's promise if it was asked for already, else null (nothing to update yet). */
    get made() {
      return made;
    },
  };
}
