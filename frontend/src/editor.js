// The bundle's whole API: the page's own modules import only from here (`createEditor`,
// `createDiffView`, `markdownFragment`), never `@codemirror/*`, markdown-it or DOMPurify directly,
// so an upgrade of any of them touches this file and nothing else.
//
// Colours come from CSS custom properties (see server/static/css/app.css), so switching between
// the light and dark theme is pure CSS: no editor reconfiguration.

import { basicSetup } from "codemirror";
import { indentWithTab, isolateHistory } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { HighlightStyle, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { MergeView } from "@codemirror/merge";
import { Compartment, EditorState, Prec, RangeSet, StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView, GutterMarker, gutterLineClass, keymap } from "@codemirror/view";
import { tags as t } from "@lezer/highlight";
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";

const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword], color: "var(--tok-keyword)" },
  { tag: [t.comment, t.lineComment], color: "var(--tok-comment)", fontStyle: "italic" },
  { tag: [t.string, t.special(t.string), t.docString], color: "var(--tok-string)" },
  { tag: [t.number, t.bool, t.null, t.atom], color: "var(--tok-number)" },
  { tag: [t.function(t.definition(t.variableName)), t.function(t.variableName)], color: "var(--tok-function)" },
  { tag: [t.className, t.definition(t.className), t.typeName], color: "var(--tok-type)" },
  { tag: [t.propertyName, t.function(t.propertyName)], color: "var(--tok-property)" },
  { tag: [t.self, t.standard(t.variableName)], color: "var(--tok-builtin)" },
  { tag: [t.operator, t.punctuation], color: "var(--tok-operator)" },
  { tag: t.meta, color: "var(--tok-meta)" },
  { tag: t.invalid, color: "var(--tok-invalid)" },
]);

const theme = EditorView.theme({
  "&": { color: "var(--fg)", backgroundColor: "var(--editor-bg)", height: "100%", fontSize: "var(--editor-font-size, 13.5px)" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.5" },
  ".cm-content": { caretColor: "var(--fg)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--fg)" },
  ".cm-gutters": { backgroundColor: "var(--editor-gutter)", color: "var(--muted)", borderRight: "1px solid var(--border)" },
  ".cm-activeLine": { backgroundColor: "var(--editor-active)" },
  ".cm-activeLineGutter": { backgroundColor: "var(--editor-active)" },
  "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, ::selection":
    { backgroundColor: "var(--editor-selection)" },
  ".cm-matchingBracket, &.cm-focused .cm-matchingBracket": { backgroundColor: "var(--editor-bracket)", outline: "none" },
  ".cm-tooltip": { backgroundColor: "var(--panel)", color: "var(--fg)", border: "1px solid var(--border)" },
  ".cm-tooltip-autocomplete > ul > li[aria-selected]": { backgroundColor: "var(--accent)", color: "var(--accent-fg)" },
  ".cm-panels": { backgroundColor: "var(--panel)", color: "var(--fg)" },
  ".cm-error-line": { backgroundColor: "var(--error-line)" },
  ".cm-gutterElement.cm-error-gutter": { backgroundColor: "var(--bad)", color: "var(--bad-fg)" },
  ".cm-race-line": { backgroundColor: "var(--race-line)" },
  ".cm-gutterElement.cm-race-gutter": { backgroundColor: "var(--warn)", color: "var(--panel)" },
});

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
    syntaxHighlighting(highlight),
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

/**
 * A read-only side-by-side diff of two texts in `parent`: `left` (the user's code) against `right`
 * (the template or the solution), unchanged stretches collapsed. Returns {destroy(), chunks}.
 */
export function createDiffView(parent, { left, right, wrap = false }) {
  const side = (doc) => ({
    doc,
    extensions: [basicSetup, python(), syntaxHighlighting(highlight), theme, EditorState.readOnly.of(true), EditorView.editable.of(false), wrap ? EditorView.lineWrapping : []],
  });
  const view = new MergeView({ a: side(left), b: side(right), parent, collapseUnchanged: { margin: 2, minSize: 4 }, gutter: true });
  return { destroy: () => view.destroy(), chunks: view.chunks.length };
}

// Markdown for notes and READMEs: markdown-it without raw HTML and without images, then DOMPurify
// with a short list of tags; every link's href is decided by the page's own `safeHref` on the value
// the browser will actually use (entities decoded), and replaced by its normalised form.
const markdown = new MarkdownIt("default", { html: false, linkify: false, typographer: false });
markdown.disable(["image"]);
markdown.core.ruler.push("shift_headings", (state) => {
  const shift = state.env?.headingShift ?? 0;
  for (const token of state.tokens) {
    if (token.type === "heading_open" || token.type === "heading_close") token.tag = `h${Math.min(Number(token.tag.slice(1)) + shift, 6)}`;
  }
});
const purify = DOMPurify(window);
const ALLOWED_TAGS = ["p", "br", "strong", "em", "s", "code", "pre", "blockquote", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "a", "table", "thead", "tbody", "tr", "th", "td"];
let linkPolicy = () => null;
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.nodeName !== "A") return;
  const raw = node.getAttribute("href");
  const href = raw === null ? null : linkPolicy(raw);
  for (const name of ["href", "rel", "target"]) node.removeAttribute(name);
  if (href === null) return;
  node.setAttribute("href", href);
  node.setAttribute("rel", "noopener noreferrer");
  node.setAttribute("target", "_blank");
});

/**
 * Markdown `text` as a sanitised DocumentFragment. `safeHref(raw)` returns the href to use for a
 * link, or null to leave it unlinked; `headingShift` moves headings down (1 → 1 + shift).
 */
export function markdownFragment(text, { safeHref, headingShift = 0 }) {
  const html = markdown.render(String(text ?? ""), { headingShift });
  linkPolicy = safeHref;
  try {
    return purify.sanitize(html, { ALLOWED_TAGS, ALLOWED_ATTR: ["href", "title"], RETURN_DOM_FRAGMENT: true });
  } finally {
    linkPolicy = () => null;
  }
}
