// Copying text: the asynchronous Clipboard API where the page may use it, else a hidden
// textarea and document.execCommand('copy') (older browsers, pages not served securely).

/**
 * Puts `text` on the clipboard; resolves to the way it was copied ('clipboard' or
 * 'execCommand'); rejects when neither works.
 * @param {string} text
 * @returns {Promise<'clipboard' | 'execCommand'>}
 */
export async function copyText(text) {
  if (navigator.clipboard?.writeText && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return 'clipboard';
    } catch {
      // Permission refused or the page not focused: try the old way.
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  const focused = document.activeElement;
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  focused?.focus?.({ preventScroll: true });
  if (!ok) throw Object.assign(new Error('the browser refused to copy to the clipboard'), { code: 'clipboard' });
  return 'execCommand';
}
