// The result view: the rows of the last read (a ResultStore) shown in the virtual grid, with
// what the user does to them — sort by a column (a permutation, never a copy), hide and show
// columns, select rows, open a cell in the side panel, copy rows as CSV or TSV, and download
// the whole result as CSV, Parquet or Arrow. Display position p shows stream row
// `toStream(p)`.

import { toParquetInWorker } from 'delta-arrow-reader/remote.js';
import { CellPanel } from './cellpanel.js';
import { $, afterPaint, el } from './dom.js';
import { arrowBlob } from './export/arrow.js';
import { copyText } from './export/clipboard.js';
import { delimitedParts, FORMATS } from './export/csv.js';
import { baseName, saveBlob } from './export/save.js';
import { formatBytes, formatCell, formatCount, formatDuration, fullText, isNumericType, plural, typeLabel } from './format.js';
import { VirtualGrid } from './grid.js';
import { ResultStore } from './result.js';
import { RowSelection } from './selection.js';
import { nextDirection, sortPermutation } from './sort.js';

/** Rows looked at to size a column. */
const SAMPLE_ROWS = 50;

export class ResultView {
  /**
   * @param {{ status: (text: string, kind?: string) => void,
   *   error: (err: unknown, what: string) => void }} hooks
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.store = new ResultStore();
    this.selection = new RowSelection();
    this.hidden = new Set(); // column names hidden in the grid (kept across reads)
    this.sort = null; // { name, direction }
    this.perm = null; // Uint32Array: display position → stream row, for the rows sorted
    this.visible = []; // store column indexes shown, in order
    this.meta = { arrowTypes: new Map(), deltaTypes: new Map(), table: '', version: 0 };
    this.reading = false;
    this.panel = new CellPanel($('cell-panel'));
    this.grid = new VirtualGrid($('grid'), {
      onOpen: (p, j, fromKeyboard) => this.openCell(p, j, fromKeyboard),
      onRowNumber: (p, e) => this.selectRow(p, e),
      onSelectRow: (p, e) => this.selectRow(p, { ...e, ctrlKey: true }),
      onSort: (j) => this.toggleSort(this.visible[j]),
    });
    $('colmenu-list').addEventListener('change', (e) => {
      if (e.target.name !== 'show-column') return;
      if (e.target.checked) this.hidden.delete(e.target.value);
      else this.hidden.add(e.target.value);
      this.#columnsChanged();
    });
    // The column menu closes on a click elsewhere (and on Escape: app.js).
    const menu = $('colmenu');
    document.addEventListener('click', (e) => {
      if (menu.open && !menu.contains(e.target)) menu.open = false;
    });
    $('show-all').addEventListener('click', () => {
      this.hidden.clear();
      this.#columnsChanged();
    });
    $('copy-csv').addEventListener('click', () => this.copy(FORMATS.csv));
    $('copy-tsv').addEventListener('click', () => this.copy(FORMATS.tsv));
    $('download-csv').addEventListener('click', () => this.downloadCsv());
    $('download-arrow').addEventListener('click', () => this.downloadArrow());
    $('download-parquet').addEventListener('click', () => this.downloadParquet());
  }

  /** Display position → stream row. */
  toStream(p) {
    return this.perm && p < this.perm.length ? this.perm[p] : p;
  }

  /**
   * Starts showing a new read. `meta`: the scan's Arrow type labels and the table's Delta
   * types by column name, the table URL and version (for file names). `sameTable` keeps the
   * hidden columns and the sort.
   */
  begin(meta, sameTable) {
    this.meta = meta;
    this.store = new ResultStore();
    this.selection.clear();
    this.perm = null;
    this.reading = true;
    if (!sameTable) {
      this.hidden.clear();
      this.sort = null;
    }
    // The grid keeps the previous columns until the first rows arrive: a read of the same
    // columns then reuses every row element.
    this.grid.setEmpty('Reading…');
    this.grid.setSource(this.#source());
    this.#buttons();
  }

  /** Adds one piece of the scan's IPC stream; the grid shows it in its next frame. */
  addPiece(piece) {
    const first = !this.store.schema;
    const added = this.store.addPiece(piece);
    if (first && this.store.schema) this.#columnsChanged(!this.#sameColumns());
    if (added) this.grid.refresh(false);
    return added;
  }

  /** The read has ended (complete, cancelled or failed): sorts all rows if sorted, and
   * resolves to how (`sorted by x (ascending)`), or '' when not sorted. */
  async end(emptyText = 'No rows.') {
    this.reading = false;
    this.grid.setEmpty(emptyText);
    if (!this.store.schema) {
      // Nothing arrived: no columns of an earlier read stay on show, in the grid or in the
      // column menu (which listed the last table's columns after a failed read).
      this.#columnsChanged(true);
    }
    this.grid.settle();
    this.#buttons();
    return this.sort ? this.#applySort(false) : '';
  }

  get rowCount() {
    return this.store.rowCount;
  }

  #source() {
    const view = this;
    return {
      get rowCount() {
        return view.store.rowCount;
      },
      cell: (p, j) => {
        const col = this.visible[j];
        return formatCell(this.store.value(col, this.toStream(p)), this.store.fields[col].type);
      },
      selected: (p) => this.selection.has(this.toStream(p)),
      rowLabel: (p) => formatCount(this.toStream(p) + 1),
    };
  }

  /** Column widths from the name, the type and the first rows' texts. */
  #width(col) {
    const field = this.store.fields[col];
    const label = this.#arrowType(col);
    let chars = Math.max(field.name.length + 2, Math.min(label.length, 24));
    const rows = Math.min(this.store.rowCount, SAMPLE_ROWS);
    for (let r = 0; r < rows; r++) chars = Math.max(chars, formatCell(this.store.value(col, r), field.type).text.length);
    return Math.round(Math.min(440, Math.max(72, chars * 7.8 + 26)));
  }

  #arrowType(col) {
    const field = this.store.fields[col];
    return this.meta.arrowTypes.get(field.name) ?? typeLabel(field.type);
  }

  /** Whether the new read has the columns of the one before (names and types): then the
   * columns keep their widths. */
  #sameColumns() {
    const key = this.store.fields.map((f) => `${f.name}:${this.#arrowType(this.store.fields.indexOf(f))}`).join(',');
    const same = key === this.fieldsKey;
    this.fieldsKey = key;
    return same && Boolean(this.widths);
  }

  #columnsChanged(fresh = false) {
    const fields = this.store.fields;
    this.visible = fields.map((_, i) => i).filter((i) => !this.hidden.has(fields[i].name));
    if (fresh || !this.widths) this.widths = fields.map((_, i) => this.#width(i));
    this.grid.setColumns(
      this.visible.map((i) => ({
        name: fields[i].name,
        label: this.#arrowType(i),
        width: this.widths[i],
        numeric: isNumericType(fields[i].type),
        sort: this.sort?.name === fields[i].name ? this.sort.direction : null,
      })),
    );
    this.grid.setSource(this.#source(), !fresh);
    $('colmenu-summary').textContent = `Columns (${this.visible.length} of ${fields.length})`;
    this.#columnMenu();
    this.#buttons();
  }

  /** The column menu's checkboxes: rebuilt for new columns, else only their state set (so
   * that the one being clicked keeps the focus). */
  #columnMenu() {
    const fields = this.store.fields;
    const list = $('colmenu-list');
    const names = fields.map((f) => f.name).join('\u0000');
    if (list.dataset.names !== names) {
      list.dataset.names = names;
      list.replaceChildren(
        ...fields.map((f, i) =>
          el(
            'label',
            { className: 'colmenu-item' },
            el('input', { type: 'checkbox', name: 'show-column', value: f.name }),
            ` ${f.name}`,
            el('span', { className: 'coltype', textContent: ` ${this.#arrowType(i)}` }),
          ),
        ),
      );
    }
    for (const box of list.querySelectorAll('input')) box.checked = !this.hidden.has(box.value);
  }

  /** Closes the column menu; true when it was open. */
  closeMenu() {
    const menu = $('colmenu');
    if (!menu.open) return false;
    menu.open = false;
    menu.querySelector('summary').focus({ preventScroll: true });
    return true;
  }

  #buttons() {
    const none = this.store.rowCount === 0 && !this.store.schema;
    // With every column hidden there is nothing to write (an Arrow stream needs a column).
    const noColumns = !none && this.visible.length === 0;
    for (const id of ['copy-csv', 'copy-tsv', 'download-csv', 'download-arrow', 'download-parquet']) {
      $(id).disabled = none || noColumns || this.reading;
      $(id).title = noColumns ? 'Show at least one column (Columns menu) to copy or download' : '';
    }
    const n = this.selection.count;
    $('selection').textContent = n ? `${plural(n, 'row')} selected` : '';
    $('copy-csv').textContent = n ? `Copy ${formatCount(n)} as CSV` : 'Copy CSV';
    $('copy-tsv').textContent = n ? `Copy ${formatCount(n)} as TSV` : 'Copy TSV';
  }

  // ------------------------------------------------------------ sorting

  /** Cycles the sort of store column `col`: ascending, descending, off. */
  async toggleSort(col) {
    const name = this.store.fields[col]?.name;
    if (name === undefined) return;
    const direction = nextDirection(this.sort?.name === name ? this.sort.direction : null);
    this.sort = direction ? { name, direction } : null;
    await this.#applySort();
    this.grid.setActive(0, this.grid.active.col); // the first rows of the new order
  }

  /** Sorts by `this.sort` (or restores the stream order); `report`: say so in the status.
   * Resolves to what was done (`sorted by x (ascending)`). */
  async #applySort(report = true) {
    const sort = this.sort;
    const col = sort ? this.store.fields.findIndex((f) => f.name === sort.name) : -1;
    if (!sort || col < 0) {
      this.perm = null;
      this.#columnsChanged();
      if (report && !this.reading) this.hooks.status(`${plural(this.store.rowCount, 'row')} in the order read.`, 'good');
      return '';
    }
    const n = this.store.rowCount;
    const t0 = performance.now();
    const what = `by ${sort.name} (${sort.direction === 'asc' ? 'ascending' : 'descending'})`;
    document.body.classList.add('sorting');
    this.hooks.status(`Sorting ${plural(n, 'row')} ${what}…`);
    await afterPaint();
    if (this.sort !== sort) return '';
    try {
      this.perm = sortPermutation(this.store, col, sort.direction);
    } finally {
      document.body.classList.remove('sorting');
    }
    this.#columnsChanged();
    const later = this.reading ? '; rows still arriving are added unsorted until the read ends' : '';
    if (report) this.hooks.status(`Sorted ${plural(n, 'row')} ${what} in ${formatDuration(performance.now() - t0)}${later}.`, 'good');
    return `sorted ${what}`;
  }

  // ------------------------------------------------------------ selection and the cell panel

  selectRow(p, how) {
    this.selection.click(p, how, (q) => this.toStream(q));
    this.grid.refresh(true);
    this.#buttons();
  }

  openCell(p, j, fromKeyboard) {
    const col = this.visible[j];
    const field = this.store.fields[col];
    if (!field) return;
    const row = this.toStream(p);
    const value = this.store.value(col, row);
    this.panel.open(
      {
        column: field.name,
        deltaType: this.meta.deltaTypes.get(field.name) ?? '',
        arrowType: this.#arrowType(col),
        row: `${formatCount(row + 1)} of ${formatCount(this.store.rowCount)}`,
        text: fullText(value, field.type, true),
        isNull: value === null || value === undefined,
      },
      fromKeyboard,
    );
  }

  // ------------------------------------------------------------ copy and downloads

  /** Display positions to export: the selected rows, or all. */
  #rows() {
    const n = this.store.rowCount;
    if (!this.selection.count) return { count: n, at: (i) => this.toStream(i) };
    const rows = new Uint32Array(this.selection.count);
    let k = 0;
    for (let p = 0; p < n && k < rows.length; p++) {
      const r = this.toStream(p);
      if (this.selection.has(r)) rows[k++] = r;
    }
    return { count: k, at: (i) => rows[i] };
  }

  async #text(format, rows, utf8 = false) {
    const fields = this.store.fields;
    const header = this.visible.map((c) => fields[c].name);
    const types = this.visible.map((c) => fields[c].type);
    const texts = (i) => {
      const [batches, at] = this.store.locate(rows.at(i));
      // A null stays null: CSV writes it as an empty field, an empty value as "".
      return this.visible.map((c, k) => {
        const value = batches[c].at(at);
        return value === null || value === undefined ? null : fullText(value, types[k]);
      });
    };
    return delimitedParts(header, rows.count, texts, format, {
      utf8,
      onProgress: (done, total) => done < total && this.hooks.status(`Writing ${formatCount(done)} of ${plural(total, 'row')}…`),
    });
  }

  async copy(format) {
    const rows = this.#rows();
    try {
      const parts = await this.#text(format, rows);
      const how = await copyText(parts.join(''));
      const which = this.selection.count ? 'selected ' : '';
      this.hooks.status(`Copied ${plural(rows.count, `${which}row`)} as ${format.ext.toUpperCase()}${how === 'execCommand' ? ' (fallback copy)' : ''}.`, 'good');
      document.body.dataset.copied = format.ext;
    } catch (err) {
      this.hooks.status('');
      this.hooks.error(err, 'Could not copy');
    }
  }

  async downloadCsv() {
    const rows = { count: this.store.rowCount, at: (i) => this.toStream(i) };
    try {
      const parts = await this.#text(FORMATS.csv, rows, true);
      saveBlob(new Blob(parts, { type: FORMATS.csv.mime }), `${baseName(this.meta.table, this.meta.version)}.csv`);
      this.hooks.status(`Downloading ${plural(rows.count, 'row')} as CSV.`, 'good');
    } catch (err) {
      this.hooks.status('');
      this.hooks.error(err, 'Could not write the CSV');
    }
  }

  async downloadArrow() {
    try {
      const blob = await arrowBlob(this.store, this.visible, this.perm, {
        onProgress: (done, total) => this.hooks.status(`Gathering ${formatCount(done)} of ${plural(total, 'row')} in display order…`),
      });
      const asRead = this.visible.length === this.store.fields.length && !this.perm;
      saveBlob(blob, `${baseName(this.meta.table, this.meta.version)}.arrows`);
      this.hooks.status(`Downloading ${plural(this.store.rowCount, 'row')} as an Arrow stream (${asRead ? 'the bytes as read' : 're-encoded: columns hidden or rows sorted'}).`, 'good');
    } catch (err) {
      this.hooks.status('');
      this.hooks.error(err, 'Could not write the Arrow stream');
    }
  }

  /** Parquet: the Arrow stream of the result as shown (see downloadArrow), written by the
   * package's Parquet writer in the reading worker (its module is fetched there on the first
   * download), so the page stays responsive while a big file is written. */
  async downloadParquet() {
    try {
      const blob = await arrowBlob(this.store, this.visible, this.perm, {
        onProgress: (done, total) => this.hooks.status(`Gathering ${formatCount(done)} of ${plural(total, 'row')} in display order…`),
      });
      this.hooks.status(`Writing ${plural(this.store.rowCount, 'row')} as Parquet…`);
      const file = await toParquetInWorker(blob);
      saveBlob(new Blob([file], { type: 'application/vnd.apache.parquet' }), `${baseName(this.meta.table, this.meta.version)}.parquet`);
      this.hooks.status(`Downloading ${plural(this.store.rowCount, 'row')} as Parquet (${formatBytes(file.byteLength)}).`, 'good');
    } catch (err) {
      this.hooks.status('');
      this.hooks.error(err, 'Could not write the Parquet file');
    }
  }
}
