// The editor: the page's own modules import only from the bundle's entry files (`createEditor` here,
// `createDiffView` from diff.js, `markdownFragment` from markdown.js), never `@codemirror/*`,
// markdown-it or DOMPurify directly, so an upgrade of any of them touches these files and nothing else.
// The diff view and Markdown are entries of their own, loaded by the page when first used; what they
// share with this one is split into a chunk by the build (build.mjs), loaded once.

import { basicSetup } from "codemirror";
import { indentWithTab, isolateHistory } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { indentUnit } from "@codemirror/language";
import { Compartment, EditorState, Prec, RangeSet, StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView, GutterMarker, gutterLineClass, keymap } from "@codemirror/view";
import { highlighting, theme } from "./look.js";

// Marked lines (the line an error points at, the lines of racing accesses), kept in place while
// the user edits. Each kind has its own line class, data attribute and gutter colour.
const setMarks = StateEffect.define();
const gutterMarks = {};
function gutterMarkFor(kind) {
  gutterMarks[kind] ??= new (class extends GutterMarker {
    elementClass = `cm-${kind}-gutter`;
  })();
  return gutterMarks[kind];
}

const markField = StateField.define({
  create: () => ({ deco: Decoration.none, gutter: RangeSet.empty }),
  update(value, tr) {
    let { deco, gutter } = value;
    deco = deco.map(tr.changes);
    gutter = gutter.map(tr.changes);
    for (const effect of tr.effects) {
      if (!effect.is(setMarks)) continue;
      const marks = [...effect.value].sort((a, b) => a.from - b.from);
      deco = Decoration.set(
        marks.map(({ from, number, message, kind }) =>
          Decoration.line({ class: `cm-${kind}-line`, attributes: { [`data-${kind}-line`]: String(number), title: message } }).range(from),
        ),
      );
      gutter = RangeSet.of(marks.map(({ from, kind }) => gutterMarkFor(kind).range(from)));
    }
    return { deco, gutter };
  },
  provide: (f) => [EditorView.decorations.from(f, (v) => v.deco), gutterLineClass.from(f, (v) => v.gutter)],
});

/**
 * Mount an editor in `parent`.
 * @param {HTMLElement} parent
 * @param {{doc?: string, onChange?: (text: string) => void, onRun?: () => void,
 *          readOnly?: boolean, label?: string}} options
 */
export function createEditor(parent, { doc = "", onChange = null, onRun = null, readOnly = false, label = "Code", wrap = false } = {}) {
  const wrapping = new Compartment();
  const extensions = [
    wrapping.of(wrap ? EditorView.lineWrapping : []),
    basicSetup,
    keymap.of([indentWithTab]),
    python(),
    indentUnit.of("    "), // lang-python would indent by 2 spaces otherwise
    EditorState.tabSize.of(4),
    highlighting,
    theme,
    markField,
    EditorState.readOnly.of(readOnly),
    EditorView.contentAttributes.of({ "aria-label": label, ...(readOnly ? { "aria-readonly": "true" } : {}) }),
  ];
  if (onRun) {
    extensions.push(Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (onRun(), true) }])));
  }
  if (onChange) {
    extensions.push(EditorView.updateListener.of((u) => u.docChanged && onChange(u.state.doc.toString())));
  }
  const view = new EditorView({ parent, state: EditorState.create({ doc, extensions }) });

  function lineAt(number) {
    const doc = view.state.doc;
    return number >= 1 && number <= doc.lines ? doc.line(number) : null;
  }

  return {
    view,
    getValue: () => view.state.doc.toString(),
    /** Replace the whole text; the change is one undoable step of its own (never merged with typing). */
    setValue(text) {
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: text },
        effects: setMarks.of([]),
        annotations: isolateHistory.of("full"),
      });
    },
    focus: () => view.focus(),
    /**
     * Highlight lines in the gutter and the text, replacing earlier marks. Each mark:
     * {line (1-based), message, kind: "error" | "race"}. Returns how many lines exist and were marked.
     */
    markLines(marks) {
      const found = [];
      const seen = new Set();
      for (const { line: number, message = "", kind = "error" } of marks) {
        const line = lineAt(number);
        if (!line || seen.has(line.from)) continue;
        seen.add(line.from);
        found.push({ from: line.from, number, message, kind });
      }
      view.dispatch({ effects: setMarks.of(found) });
      return found.length;
    },
    /** Highlight one line as an error; false if there is no such line. */
    markLine(number, message = "") {
      return this.markLines([{ line: number, message, kind: "error" }]) === 1;
    },
    clearMark: () => view.dispatch({ effects: setMarks.of([]) }),
    /** Wrap long lines (true) or scroll sideways (false). */
    setWrap(on) {
      view.dispatch({ effects: wrapping.reconfigure(on ? EditorView.lineWrapping : []) });
    },
    /** Measure again after the page changed the editor's font size (a CSS variable). */
    refresh: () => view.requestMeasure(),
    /** Put the cursor on line `number` and scroll it into the middle of the view. */
    goToLine(number) {
      const line = lineAt(number);
      if (!line) return;
      view.dispatch({ selection: { anchor: line.from }, effects: EditorView.scrollIntoView(line.from, { y: "center" }) });
      view.focus();
    },
  };
}

