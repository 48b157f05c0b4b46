// What every editor of the bundle looks like: the token colours and the theme, shared by the editor
// (editor.js) and the diff view (diff.js). Colours are CSS custom properties (server/static/css/app.css),
// so switching between the light and dark theme is pure CSS: no editor reconfiguration.

import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorView } from "@codemirror/view";
import { tags as t } from "@lezer/highlight";

export const highlight = HighlightStyle.define([
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

export const theme = EditorView.theme({
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

export const highlighting = syntaxHighlighting(highlight);
