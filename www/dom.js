// Small DOM helpers shared by the viewer's modules.

/** The element with id `id`. */
export const $ = (id) => document.getElementById(id);

/**
 * A new element: `props` are assigned to it (textContent, className, ...), then `children`
 * (nodes or text) appended.
 */
export function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  for (const c of children) node.append(c);
  return node;
}

/** A small label: `chip('part', 'part')`. */
export function chip(text, cls = '') {
  return el('span', { className: `chip ${cls}`.trim(), textContent: text });
}

/** Resolves after the browser has painted (the next frame, then a task). */
export function afterPaint() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

/** Resolves in a new task, letting the page handle input and paint in between. */
export function nextTask() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
