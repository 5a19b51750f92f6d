// The cell panel: a side panel with one value in full — its column, Delta and Arrow types,
// row, and the whole value (all of a long string, indented JSON for structs, lists and
// maps, every byte of binary as hex, exact decimals and 64-bit integers) with a Copy
// button. Escape or Close puts the focus back where it was.

import { copyText } from './export/clipboard.js';

export class CellPanel {
  /** @param {HTMLElement} root  the panel element (holds the ids used below) */
  constructor(root) {
    this.root = root;
    this.title = root.querySelector('#cell-title');
    this.facts = root.querySelector('#cell-facts');
    this.value = root.querySelector('#cell-value');
    this.note = root.querySelector('#cell-note');
    this.copy = root.querySelector('#cell-copy');
    this.returnTo = null;
    root.querySelector('#cell-close').addEventListener('click', () => this.close());
    root.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        this.close();
      }
    });
    this.copy.addEventListener('click', async () => {
      try {
        await copyText(this.value.textContent);
        this.note.textContent = 'Copied.';
      } catch (err) {
        this.note.textContent = `Could not copy: ${err.message}`;
      }
    });
  }

  get isOpen() {
    return !this.root.hidden;
  }

  /**
   * Shows one cell.
   * @param {{ column: string, deltaType: string, arrowType: string, row: number,
   *   text: string, isNull: boolean }} cell
   * @param {boolean} focus  move the focus to the panel (opened from the keyboard)
   */
  open(cell, focus = false) {
    if (!this.isOpen) this.returnTo = document.activeElement;
    this.title.textContent = cell.column;
    const facts = [
      ['Row', cell.row],
      ['Delta type', cell.deltaType || '—'],
      ['Arrow type', cell.arrowType || '—'],
      ['Length', cell.isNull ? '— (the value is null)' : `${codePoints(cell.text).toLocaleString('en-US')} characters`],
    ];
    this.facts.replaceChildren(
      ...facts.flatMap(([k, v]) => {
        const dt = document.createElement('dt');
        dt.textContent = k;
        const dd = document.createElement('dd');
        dd.textContent = String(v);
        dd.dataset.fact = k;
        return [dt, dd];
      }),
    );
    this.value.textContent = cell.isNull ? 'null' : cell.text;
    this.value.classList.toggle('null', cell.isNull);
    this.note.textContent = '';
    this.root.hidden = false;
    document.body.classList.add('panel-open');
    if (focus) this.copy.focus({ preventScroll: true });
  }

  close() {
    if (!this.isOpen) return;
    this.root.hidden = true;
    document.body.classList.remove('panel-open');
    this.returnTo?.focus?.({ preventScroll: true });
    this.returnTo = null;
  }
}

/** Characters (code points) of `text`, without an array of them (a cell may hold megabytes). */
function codePoints(text) {
  return text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}
