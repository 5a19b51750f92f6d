// Which rows of a read are selected (row numbers clicked; Shift extends a range, Ctrl or ⌘
// toggles one): a bitmap over stream rows, so a selection survives sorting and a range of a
// million rows costs a million bits.

export class RowSelection {
  constructor() {
    this.bits = new Uint8Array(0);
    this.count = 0;
    this.anchor = null; // display position the next Shift-click extends from
  }

  clear() {
    this.bits = new Uint8Array(0);
    this.count = 0;
    this.anchor = null;
  }

  /** Whether stream row `row` is selected. */
  has(row) {
    return ((this.bits[row >> 3] ?? 0) & (1 << (row & 7))) !== 0;
  }

  #set(row, on) {
    const i = row >> 3;
    if (i >= this.bits.length) {
      if (!on) return;
      const grown = new Uint8Array(Math.max(i + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    const mask = 1 << (row & 7);
    const was = (this.bits[i] & mask) !== 0;
    if (was === on) return;
    this.bits[i] ^= mask;
    this.count += on ? 1 : -1;
  }

  /**
   * Applies a click on the row number at display position `p`: `toStream(p)` gives its stream
   * row. A plain click selects only that row (or clears it when it was the only one).
   * @param {number} p
   * @param {{ shiftKey?: boolean, ctrlKey?: boolean, metaKey?: boolean }} how
   * @param {(p: number) => number} toStream
   */
  click(p, how, toStream) {
    const row = toStream(p);
    if (how.shiftKey && this.anchor !== null) {
      const [a, b] = this.anchor < p ? [this.anchor, p] : [p, this.anchor];
      for (let q = a; q <= b; q++) this.#set(toStream(q), true);
      return;
    }
    if (how.ctrlKey || how.metaKey) {
      this.#set(row, !this.has(row));
    } else {
      const only = this.count === 1 && this.has(row);
      this.clear();
      if (!only) this.#set(row, true);
    }
    this.anchor = p;
  }
}
