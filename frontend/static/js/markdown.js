// Markdown for catalog READMEs and lesson notes: markdown-it and DOMPurify from the committed bundle
// (no raw HTML, no images, a short list of tags), and this module's link rule, applied to the href
// the browser would use (entities already decoded by then):
// - an absolute URL is kept only if its scheme is http or https;
// - anything else is a path on this site, kept only if it still is one once the browser has
//   resolved it (`/\evil.example/` resolves to another host, `\x01javascript:` to javascript:);
// and the link gets the browser's normalised form, so what is checked is what is followed.


/**
 * The href to use for a link written as `raw`, or null when it must not be a link. `base` is the
 * page's address (the site a relative link must stay on).
 */
export function safeHref(raw, base = location.href) {
  const text = String(raw ?? "");
  let absolute = null;
  try {
    absolute = new URL(text); // the parser strips control characters and spaces at either end
  } catch {
    /* not absolute: a path, resolved below */
  }
  if (absolute) return absolute.protocol === "http:" || absolute.protocol === "https:" ? absolute.href : null;
  let resolved;
  let site;
  try {
    site = new URL(base);
    resolved = new URL(text, site);
  } catch {
    return null;
  }
  if (resolved.origin !== site.origin || !/^https?:$/.test(resolved.protocol)) return null;
  return `${resolved.pathname}${resolved.search}${resolved.hash}`;
}

// The renderer (55 KB gzip) is loaded when Markdown is first shown, not with the page: until then a
// rendering is a placeholder holding the plain text, filled in once it scrolls into view (a README
// in a hidden tab waits until the tab is opened).
let renderer = null; // the bundle's markdownFragment, once loaded
let loading = null;

/** Load the renderer now; resolves once `renderMarkdown` renders at once. */
export function markdownReady() {
  loading ??= import("../vendor/codemirror/markdown.esm.min.js").then((m) => (renderer = m.markdownFragment));
  return loading;
}

const waiting = new WeakMap(); // placeholder -> its text and options
const observer = new IntersectionObserver(
  (entries) => {
    for (const { target, isIntersecting } of entries) {
      if (!isIntersecting) continue;
      observer.unobserve(target);
      markdownReady().then(() => {
        const { text, options } = waiting.get(target);
        target.replaceWith(renderer(text, options));
      });
    }
  },
  { rootMargin: "200px" },
);

/**
 * Markdown text to a DocumentFragment. `headingShift`: README and note headings sit under the
 * page's own (a `#` heading becomes an h3 by default). Before the renderer is loaded, the fragment
 * holds a placeholder with the plain text, replaced in place by the rendering when it is first seen.
 */
export function renderMarkdown(text, { headingShift = 2, base = location.href } = {}) {
  const options = { safeHref: (raw) => safeHref(raw, base), headingShift };
  if (renderer) return renderer(text, options);
  const placeholder = document.createElement("div");
  placeholder.className = "markdown-pending";
  placeholder.textContent = String(text ?? "");
  waiting.set(placeholder, { text, options });
  observer.observe(placeholder);
  const fragment = document.createDocumentFragment();
  fragment.append(placeholder);
  return fragment;
}
