// A tiny Markdown renderer for catalog READMEs that builds DOM nodes directly: no HTML passthrough
// (a "<b>" in the text shows as those three characters), links only to http(s)/mailto or to
// relative addresses. Supports headings, paragraphs, lists, block quotes, fenced code, rules,
// and inline code, **bold**, *italic*, [links](url).

import { h } from "./dom.js";

const INLINE = /`([^`]+)`|\*\*(.+?)\*\*|__(.+?)__|\*([^*\s](?:[^*]*[^*\s])?)\*|\b_([^_\s](?:[^_]*[^_\s])?)_\b|\[([^\]]+)\]\(([^)\s]+)\)/;

export function safeHref(url) {
  const trimmed = url.trim();
  if (/^(https?:|mailto:)/i.test(trimmed)) return trimmed;
  if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed) || trimmed.startsWith("//")) return null; // javascript:, data:, …
  return trimmed;
}

/** Inline markup to a list of nodes. */
export function inline(text) {
  const nodes = [];
  let rest = text;
  while (rest) {
    const m = INLINE.exec(rest);
    if (!m) {
      nodes.push(rest);
      break;
    }
    if (m.index) nodes.push(rest.slice(0, m.index));
    const [whole, code, bold1, bold2, em1, em2, label, url] = m;
    if (code !== undefined) nodes.push(h("code", {}, code));
    else if (bold1 !== undefined || bold2 !== undefined) nodes.push(h("strong", {}, inline(bold1 ?? bold2)));
    else if (em1 !== undefined || em2 !== undefined) nodes.push(h("em", {}, inline(em1 ?? em2)));
    else {
      const href = safeHref(url);
      nodes.push(href ? h("a", { href, rel: "noopener noreferrer", target: "_blank" }, inline(label)) : whole);
    }
    rest = rest.slice(m.index + whole.length);
  }
  return nodes;
}

const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+(.*)$/;

/** Markdown text to a DocumentFragment. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  const paragraph = [];
  const flush = () => {
    if (paragraph.length) out.append(h("p", {}, inline(paragraph.join(" "))));
    paragraph.length = 0;
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flush();
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      out.append(h("pre", {}, h("code", { dataset: fence[2] ? { lang: fence[2] } : {} }, body.join("\n"))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      // README headings sit under the page's own headings.
      out.append(h(`h${Math.min(heading[1].length + 2, 6)}`, {}, inline(heading[2])));
      i += 1;
    } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.append(h("hr"));
      i += 1;
    } else if (/^\s*>/.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ""));
      out.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
    } else if (LIST_ITEM.test(line)) {
      flush();
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? "ol" : "ul");
      while (i < lines.length && LIST_ITEM.test(lines[i])) {
        const parts = [LIST_ITEM.exec(lines[i])[2]];
        i += 1;
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !LIST_ITEM.test(lines[i])) parts.push(lines[i++].trim());
        list.append(h("li", {}, inline(parts.join(" "))));
      }
      out.append(list);
    } else if (!line.trim()) {
      flush();
      i += 1;
    } else {
      paragraph.push(line.trim());
      i += 1;
    }
  }
  flush();
  return out;
}
