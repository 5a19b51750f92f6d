// The version slider: from version 0 to the latest, beside the version box. Dragging shows
// the version under the thumb; letting go (or a key press) opens it after a short pause,
// so a sweep over many versions opens only the one it stops at. Opening a new version
// aborts the open in flight (app.js: beginAction).

export class VersionSlider {
  /**
   * @param {{ range: HTMLInputElement, output: HTMLOutputElement, field: HTMLElement,
   *   onPick: (version: number) => void, delayMs?: number }} parts
   */
  constructor({ range, output, field, onPick, delayMs = 300 }) {
    this.range = range;
    this.output = output;
    this.field = field;
    this.onPick = onPick;
    this.delayMs = delayMs;
    this.timer = 0;
    range.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.#show();
    });
    range.addEventListener('change', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.onPick(Number(range.value)), this.delayMs);
    });
  }

  #show() {
    const v = this.range.value;
    this.output.textContent = `v${v}`;
    this.range.setAttribute('aria-valuetext', `version ${v} of ${this.range.max}`);
  }

  /** Shows the slider over 0..latest at `current`; hides it while the latest is unknown. */
  set(latest, current) {
    clearTimeout(this.timer);
    this.field.hidden = latest === null || latest === undefined || latest < 1;
    if (this.field.hidden) return;
    this.range.max = String(latest);
    this.range.value = String(current);
    this.#show();
  }
}
