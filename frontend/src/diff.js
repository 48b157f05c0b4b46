// The diff view (loaded by the page's diff dialog when it first opens): CodeMirror's merge view.

import { basicSetup } from "codemirror";
import { python } from "@codemirror/lang-python";
import { MergeView } from "@codemirror/merge";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { highlighting, theme } from "./look.js";

/**
 * A read-only side-by-side diff of two texts in `parent`: `left` (the user's code) against `right`
 * (the template or the solution), unchanged stretches collapsed. Returns {destroy(), chunks}.
 */
export function createDiffView(parent, { left, right, wrap = false }) {
  const side = (doc) => ({
    doc,
    extensions: [basicSetup, python(), highlighting, theme, EditorState.readOnly.of(true), EditorView.editable.of(false), wrap ? EditorView.lineWrapping : []],
  });
  const view = new MergeView({ a: side(left), b: side(right), parent, collapseUnchanged: { margin: 2, minSize: 4 }, gutter: true });
  return { destroy: () => view.destroy(), chunks: view.chunks.length };
}

