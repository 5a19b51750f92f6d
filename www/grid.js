// The virtualised rows grid: a scroller sized for every row of the result and a small pool
// of row elements, translated to where the viewport is and refilled on scroll, so a
// million rows cost as much DOM as thirty. Rows have one fixed height; past what browsers
// can size an element to, scroll positions are scaled onto the rows. Renders happen at most
// once a frame (requestAnimationFrame), whatever calls for them (scrolling, rows arriving).
//
// The grid knows nothing of Arrow: a source gives it the row count and each cell's text.
// Keyboard: arrows, Page Up/Down, Home/End (Ctrl: the first cell, the last row's last cell)
// move the active cell, Enter opens it, Space selects its row.

/** The tallest scroller we make; beyond it scroll positions are scaled onto the rows. */
const MAX_HEIGHT_PX = 8_000_000;
/** While rows stream in, the scroller grows at most this often (a layout each time). */
const GROW_EVERY_MS = 200;

const el = (tag, className, attrs = {}) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};

/**
 * @typedef {{ name: string, label: string, width: number, numeric: boolean,
 *   sort: 'asc' | 'desc' | null }} GridColumn
 * @typedef {{ rowCount: number, cell(row: number, col: number): { text: string, kind: string },
 *   selected(row: number): boolean, rowLabel(row: number): string }} GridSource
 */

export class VirtualGrid {
  /**
   * @param {HTMLElement} scroller  the focusable element that scrolls (role=grid)
   * @param {{ rowHeight?: number, onOpen?: Function, onRowNumber?: Function,
   *   onSort?: Function, onSelectRow?: Function }} hooks
   */
  constructor(scroller, hooks = {}) {
    this.scroller = scroller;
    this.hooks = hooks;
    this.rowHeight = hooks.rowHeight ?? 28;
    /** @type {GridColumn[]} */
    this.columns = [];
    /** @type {GridSource} */
    this.source = { rowCount: 0, cell: () => ({ text: '', kind: '' }), selected: () => false, rowLabel: String };
    this.active = { row: 0, col: 0 };
    this.stamp = 0; // bumped when every rendered row must be refilled
    this.frame = 0;
    this.height = -1; // the canvas height set last, and when
    this.heightAt = 0;
    this.growTimer = 0;
    this.pool = [];
    this.canvas = el('div', 'vg-canvas');
    this.head = el('div', 'vg-head', { role: 'row', 'aria-rowindex': '1' });
    this.body = el('div', 'vg-rows', { role: 'rowgroup' });
    this.empty = el('p', 'vg-empty');
    this.canvas.append(this.head, this.body);
    scroller.replaceChildren(this.canvas, this.empty);
    scroller.addEventListener('scroll', () => this.refresh(false), { passive: true });
    scroller.addEventListener('keydown', (e) => this.#onKey(e));
    this.body.addEventListener('click', (e) => this.#onClick(e));
    this.head.addEventListener('click', (e) => {
      const button = e.target.closest('button[data-col]');
      if (button) this.hooks.onSort?.(Number(button.dataset.col));
    });
    new ResizeObserver(() => this.#layout()).observe(scroller);
    this.setEmpty('No rows yet.');
  }

  /** Sets the columns (display order). The header is rebuilt when they differ; the row
   * pool only when their number does (a new read of the same columns reuses every row). */
  setColumns(columns) {
    const key = JSON.stringify(columns);
    if (key === this.columnsKey) return;
    this.columnsKey = key;
    const rebuild = columns.length !== this.columns.length;
    this.columns = columns;
    const widths = [this.rownumWidth(), ...columns.map((c) => c.width)];
    this.canvas.style.setProperty('--vg-cols', widths.map((w) => `${w}px`).join(' '));
    this.canvas.style.width = `${widths.reduce((a, b) => a + b, 0)}px`;
    this.head.replaceChildren(
      Object.assign(el('div', 'vg-rownum', { role: 'columnheader' }), { textContent: '#' }),
      ...columns.map((c, j) => {
        const cell = el('div', 'vg-colhead', { role: 'columnheader', 'aria-colindex': String(j + 2), 'aria-sort': ariaSort(c.sort) });
        const button = el('button', `vg-sort${c.numeric ? ' num' : ''}`, { type: 'button', 'data-col': String(j), title: `Sort by ${c.name}: ascending, descending, off` });
        const name = Object.assign(el('span', 'colname'), { textContent: c.name });
        const type = Object.assign(el('span', 'coltype'), { textContent: c.label });
        const arrow = Object.assign(el('span', 'arrow', { 'aria-hidden': 'true' }), { textContent: c.sort === 'asc' ? '▲' : c.sort === 'desc' ? '▼' : '' });
        button.append(name, type, arrow);
        cell.append(button);
        return cell;
      }),
    );
    this.scroller.setAttribute('aria-colcount', String(columns.length + 1));
    this.active.col = Math.min(this.active.col, Math.max(0, columns.length - 1));
    if (rebuild) {
      this.pool = [];
      this.body.replaceChildren();
    }
    this.#layout();
  }

  /** The row-number column's width: room for row numbers up to 9,999,999 (or more). */
  rownumWidth() {
    return 20 + 8 * formatLength(Math.max(this.source.rowCount, 9_999_999));
  }

  /** Sets the row source; `keep` keeps the scroll position and active cell. */
  setSource(source, keep = false) {
    this.source = source;
    this.height = -1;
    if (!keep) {
      this.active = { row: 0, col: 0 };
      this.scroller.scrollTop = 0;
    }
    this.refresh(true);
  }

  /** Shows `text` instead of rows when there are none. */
  setEmpty(text) {
    this.empty.textContent = text;
  }

  /** Asks for a render in the next frame; `all` refills rows that are already shown. */
  refresh(all = true) {
    if (all) this.stamp++;
    if (!this.frame) this.frame = requestAnimationFrame(() => this.render());
  }

  #layout() {
    this.headHeight = this.head.offsetHeight || this.rowHeight;
    const visible = Math.max(1, Math.ceil((this.scroller.clientHeight - this.headHeight) / this.rowHeight) + 2);
    while (this.pool.length < visible) {
      const row = el('div', 'vg-row', { role: 'row' });
      row.append(el('div', 'vg-rownum', { role: 'rowheader' }), ...this.columns.map((_, j) => el('div', 'vg-cell', { role: 'gridcell', 'data-col': String(j) })));
      row.hidden = true;
      row.p = -1;
      this.pool.push(row);
      this.body.append(row);
    }
    this.refresh(true);
  }

  /** The scroll geometry: the scroller's content height and how it maps onto the rows. */
  #geometry() {
    const n = this.source.rowCount;
    const total = n * this.rowHeight;
    const height = Math.min(total, MAX_HEIGHT_PX);
    const view = Math.max(0, this.scroller.clientHeight - this.headHeight);
    const scale = total > height && height > view ? (total - view) / (height - view) : 1;
    return { n, total, height, view, scale };
  }

  /** Renders the rows in view (called in an animation frame). */
  render() {
    this.frame = 0;
    const { n, height, scale } = this.#geometry();
    const rh = this.rowHeight;
    this.#resize(this.headHeight + height);
    if (this.ariaRows !== n) {
      this.ariaRows = n;
      this.scroller.setAttribute('aria-rowcount', String(n + 1));
    }
    this.empty.hidden = n > 0;
    const top = this.scroller.scrollTop;
    const virtualTop = top * scale;
    const first = Math.max(0, Math.min(Math.max(0, n - 1), Math.floor(virtualTop / rh)));
    this.body.style.transform = `translateY(${Math.max(0, top - (virtualTop - first * rh))}px)`;
    this.first = first;
    let activeId = '';
    for (let k = 0; k < this.pool.length; k++) {
      const row = this.pool[k];
      const p = first + k;
      if (p >= n) {
        row.hidden = true;
        row.p = -1;
        continue;
      }
      if (row.p !== p || row.stamp !== this.stamp) this.#fill(row, p);
      if (p === this.active.row) activeId = `vg-cell-${p}-${this.active.col}`;
    }
    if (activeId) this.scroller.setAttribute('aria-activedescendant', activeId);
    else this.scroller.removeAttribute('aria-activedescendant');
    this.hooks.onRender?.(first, Math.min(n, first + this.pool.length));
  }

  /** Sets the canvas height (and the row count it stands for), at most every GROW_EVERY_MS
   * while it only grows (rows streaming in), at once when it shrinks or rows are replaced. */
  #resize(px) {
    if (px === this.height) return;
    const wait = GROW_EVERY_MS - (performance.now() - this.heightAt);
    if (px > this.height && this.height > 0 && wait > 0) {
      if (!this.growTimer) {
        this.growTimer = setTimeout(() => {
          this.growTimer = 0;
          this.refresh(false);
        }, wait);
      }
      return;
    }
    this.height = px;
    this.heightAt = performance.now();
    this.canvas.style.height = `${px}px`;
  }

  /** Renders with the scroller sized for every row at once (the read has ended). */
  settle() {
    this.heightAt = 0;
    this.refresh(true);
  }

  #fill(row, p) {
    row.hidden = false;
    row.p = p;
    row.stamp = this.stamp;
    row.setAttribute('aria-rowindex', String(p + 2));
    const selected = this.source.selected(p);
    row.classList.toggle('selected', selected);
    row.setAttribute('aria-selected', String(selected));
    const cells = row.children;
    cells[0].textContent = this.source.rowLabel(p);
    for (let j = 0; j < this.columns.length; j++) {
      const cell = cells[j + 1];
      const { text, kind } = this.source.cell(p, j);
      cell.textContent = text;
      cell.className = `vg-cell ${kind}`;
      const active = p === this.active.row && j === this.active.col;
      if (active) {
        cell.id = `vg-cell-${p}-${j}`;
        cell.classList.add('active');
      } else if (cell.id) {
        cell.removeAttribute('id');
      }
    }
  }

  /** Scrolls so that display row `p` (and the active column) is in view. */
  scrollToRow(p, col = this.active.col) {
    const { scale, view } = this.#geometry();
    const rh = this.rowHeight;
    const virtualTop = this.scroller.scrollTop * scale;
    const rowTop = p * rh;
    if (rowTop < virtualTop) this.scroller.scrollTop = rowTop / scale;
    else if (rowTop + rh > virtualTop + view) this.scroller.scrollTop = (rowTop + rh - view) / scale;
    const widths = [this.rownumWidth(), ...this.columns.map((c) => c.width)];
    const left = widths.slice(0, col + 1).reduce((a, b) => a + b, 0);
    const right = left + (widths[col + 1] ?? 0);
    const sl = this.scroller.scrollLeft;
    const visible = this.scroller.clientWidth;
    if (left - widths[0] < sl) this.scroller.scrollLeft = left - widths[0];
    else if (right > sl + visible) this.scroller.scrollLeft = right - visible;
    this.refresh(true);
  }

  /** Makes (row, col) the active cell and keeps it in view. */
  setActive(row, col) {
    const n = this.source.rowCount;
    if (!n || !this.columns.length) return;
    this.active = { row: Math.max(0, Math.min(n - 1, row)), col: Math.max(0, Math.min(this.columns.length - 1, col)) };
    this.scrollToRow(this.active.row, this.active.col);
  }

  #onClick(e) {
    const row = e.target.closest('.vg-row');
    if (!row || row.p < 0) return;
    if (e.target.closest('.vg-rownum')) {
      this.hooks.onRowNumber?.(row.p, e);
      return;
    }
    const cell = e.target.closest('.vg-cell');
    if (!cell) return;
    this.setActive(row.p, Number(cell.dataset.col));
    this.scroller.focus({ preventScroll: true });
    this.hooks.onOpen?.(this.active.row, this.active.col, false);
  }

  #onKey(e) {
    // A header's sort button takes its own keys: Enter and Space press it (the grid's
    // Enter opened the cell panel, Space selected a row, and no column could be sorted
    // from the keyboard).
    if (e.target !== this.scroller && e.target.closest?.('button')) return;
    const { row, col } = this.active;
    const page = Math.max(1, this.pool.length - 3);
    const moves = {
      ArrowDown: [row + 1, col],
      ArrowUp: [row - 1, col],
      ArrowRight: [row, col + 1],
      ArrowLeft: [row, col - 1],
      PageDown: [row + page, col],
      PageUp: [row - page, col],
      Home: e.ctrlKey || e.metaKey ? [0, 0] : [row, 0],
      End: e.ctrlKey || e.metaKey ? [this.source.rowCount - 1, this.columns.length - 1] : [row, this.columns.length - 1],
    };
    if (moves[e.key]) {
      e.preventDefault();
      this.setActive(...moves[e.key]);
    } else if (e.key === 'Enter' && this.source.rowCount) {
      e.preventDefault();
      this.hooks.onOpen?.(row, col, true);
    } else if (e.key === ' ' && this.source.rowCount) {
      e.preventDefault();
      this.hooks.onSelectRow?.(row, e);
    }
  }
}

/** The length of `n` written with thousands separators. */
function formatLength(n) {
  const digits = String(n).length;
  return digits + Math.floor((digits - 1) / 3);
}

function ariaSort(sort) {
  return sort === 'asc' ? 'ascending' : sort === 'desc' ? 'descending' : 'none';
}
