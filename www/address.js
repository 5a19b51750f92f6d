// Where the viewer is and what it offers to open: the page address keeps its state
// (`?url=`, `version=`, `timestamp=`, `filter=`), and the tables to pick from come from
// `?tables=a,b` or a `tables.json` on the server. The page may be served at any path (`/`
// by `dar view`, `/www/` by `dar serve --www`): tables.json is looked for at the server's
// root, then next to the page, and names in it are resolved against where it was found.

/**
 * The tables to offer: `[{ name, url }]` (empty when there is no list).
 * `tables.json` is `["a", "b"]`, `{ "tables": ["a", "b"] }`, or entries `{ name, url }`.
 * @returns {Promise<Array<{ name: string, url: string }>>}
 */
export async function servedTables() {
  const params = new URLSearchParams(location.search);
  const fromQuery = params.get('tables');
  // A name is a path below the list's folder, percent-encoded as in a URL: `./` keeps one
  // such as `https:x` from reading as an address of its own.
  const tableUrl = (name, base) => new URL(`./${String(name).replace(/^\/+|\/+$/g, '')}/`, base).href;
  const shown = (name) => {
    try {
      return decodeURIComponent(name);
    } catch {
      return name;
    }
  };
  if (fromQuery) {
    return fromQuery.split(',').map((s) => s.trim()).filter(Boolean).map((name) => ({ name: shown(name), url: tableUrl(name, new URL('/', location.href)) }));
  }
  const candidates = [...new Set([new URL('/tables.json', location.href).href, new URL('tables.json', document.baseURI).href])];
  for (const candidate of candidates) {
    try {
      const res = await fetch(candidate, { cache: 'no-store' });
      if (!res.ok) continue;
      const json = await res.json();
      const list = Array.isArray(json) ? json : json?.tables ?? [];
      return list
        .map((t) => (typeof t === 'string' ? { name: t } : t))
        .filter((t) => t && (t.name || t.url))
        .map((t) => ({ name: t.url ? t.name ?? t.url : shown(t.name), url: t.url ? new URL(t.url, candidate).href : tableUrl(t.name, candidate) }));
    } catch {
      // Not JSON or not reachable: try the next place.
    }
  }
  return [];
}

/** The state in the page address: `{ url, version, timestamp, filter }` (strings or null). */
export function readAddress() {
  const params = new URLSearchParams(location.search);
  return { url: params.get('url'), version: params.get('version'), timestamp: params.get('timestamp'), filter: params.get('filter') };
}

/** The address parts that name what is shown: another table or version is a new history
 * entry (Back returns to the one before); another filter replaces the entry. */
const NAVIGATING = ['url', 'version', 'timestamp'];

/**
 * Writes the state into the page address (without a navigation); empty values are left out.
 * A change of table or version after one was shown adds a history entry, so that the
 * browser's Back button goes back to it (app.js reopens it on `popstate`).
 * @param {{ url?: string, version?: string, timestamp?: string, filter?: string }} state
 */
export function writeAddress(state) {
  const before = new URLSearchParams(location.search);
  const params = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(state)) {
    if (v) params.set(k, v);
    else params.delete(k);
  }
  const query = params.toString();
  const address = `${location.pathname}${query ? `?${query}` : ''}`;
  const moved = before.get('url') && NAVIGATING.some((k) => (before.get(k) ?? '') !== (params.get(k) ?? ''));
  if (moved) history.pushState(null, '', address);
  else history.replaceState(null, '', address);
}
