// Markdown rendering (loaded by the page when a README or a lesson note is first shown).

import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";

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
