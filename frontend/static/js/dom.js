// Building DOM from data. Every string becomes a text node (or an attribute value): nothing here
// ever parses HTML, so text from a kernel (stdout, errors, READMEs) cannot become markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(el, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.setAttribute("class", value);
    else if (key === "dataset") for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    else if (key === "style") for (const [k, v] of Object.entries(value)) el.style.setProperty(k, v);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** An HTML element: h("td", {class: "num"}, "1.5 ms"). */
export function h(tag, props = {}, ...children) {
  return build(document.createElement(tag), props, children);
}

/** An SVG element, same calling convention as `h`. */
export function s(tag, props = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  return build(el, {}, children);
}

/** A titled part of a result view (the Results tab, the embed): a section with an h3 heading. */
export function section(id, title, ...body) {
  return h("section", { id, class: "result-section" }, h("h3", {}, title), ...body);
}

export const $ = (selector, root = document) => root.querySelector(selector);
