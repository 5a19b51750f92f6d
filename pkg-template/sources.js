// Byte sources: the objects the wasm side reads a table through when it is not fetched over
// http(s). A source is `{ read(path, start?, end?), size?(path), list?(prefix) }` with
// paths relative to the table root (see JsSourceStore in the Rust crate). This module builds
// one for a FileSystemDirectoryHandle (File System Access API, the Origin Private File
// System) and for the files of a picked or dropped folder, and recognises a caller's own.
// The Node.js folder source lives in node-source.js, so that browsers never load node:fs.

/**
 * What `DeltaTable.open(target)` reads through: `null` for an http(s) URL (fetched), else
 * `{ source, kind, location }`. `localFolder(pathOrFileUrl)` opens a local folder where the
 * runtime has a file system (Node.js), else it is undefined.
 */
export function byteSourceFor(target, localFolder) {
  if (typeof target === 'string' || target instanceof URL) {
    const text = String(target);
    if (text.trim() === '') {
      // As natively: not the current folder.
      throw Object.assign(new TypeError('invalid table location: the location is empty'), {
        name: 'DeltaError',
        code: 'invalid_location',
        phase: 'load',
      });
    }
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase();
    const isWindowsDrive = /^[a-z]:[\\/]/i.test(text);
    // In Node.js a folder may have a colon in its name: `colon:dir/T` (no `//` after the
    // colon, not http(s)) is a relative path, as the shell reads it.
    const relativeWithColon = scheme !== undefined && scheme !== 'http' && scheme !== 'https' && !text.startsWith('//', scheme.length + 1);
    const local = scheme === 'file' || (localFolder !== undefined && (scheme === undefined || isWindowsDrive || relativeWithColon));
    if (!local) {
      return null;
    }
    if (localFolder === undefined) {
      throw invalid(
        'a file path or file:// URL can be opened in Node.js only; in a page, pass a ' +
          'FileSystemDirectoryHandle or the files of a picked folder',
      );
    }
    return { kind: 'node-fs', ...localFolder(text) };
  }
  if (isDirectoryHandle(target)) {
    return {
      kind: 'directory-handle',
      source: directoryHandleSource(target),
      location: `directory:///${encodeURIComponent(target.name || 'folder')}/`,
    };
  }
  if (isFileList(target)) {
    const { source, name } = filesSource(target);
    return { kind: 'files', source, location: `directory:///${encodeURIComponent(name)}/` };
  }
  if (target !== null && typeof target === 'object' && typeof target.read === 'function') {
    const location = target.location ?? 'source:///table/';
    return { kind: 'custom', source: target, location: String(location) };
  }
  throw invalid(
    'DeltaTable.open takes an http(s) URL, a path or file:// URL (Node.js), a ' +
      'FileSystemDirectoryHandle, the files of a picked folder, or a byte source { read, size?, list? }',
  );
}

/** An `open` argument refused: a `TypeError` named `DeltaError`, as the reader's own errors. */
function invalid(message) {
  return Object.assign(new TypeError(message), { name: 'DeltaError', code: 'invalid_argument', phase: 'load' });
}

function isDirectoryHandle(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    value.kind === 'directory' &&
    typeof value.getFileHandle === 'function' &&
    typeof value.getDirectoryHandle === 'function'
  );
}

function isFileList(value) {
  if (typeof FileList !== 'undefined' && value instanceof FileList) {
    return true;
  }
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((f) => typeof Blob !== 'undefined' && f instanceof Blob && typeof f.name === 'string')
  );
}

/** The names of the log files a load reads: commits and checkpoints (not `.crc`, `.tmp`). */
export const LOG_FILE = /^\d{20}\.(json|checkpoint(\.[^/]+)?\.(parquet|json))$/;

/** A commit or checkpoint a listing would leave out (a folder, a FIFO, a link to nothing)
 * would make the log seem to end before it: an older version read as the latest. Each
 * listing source refuses one with this error, as natively. */
export function notReadable(path, what) {
  return Object.assign(new Error(`${path}: a log file that is ${what}: the log cannot be read past it`), { code: 'io' });
}

function notFound(path) {
  const error = new Error(`not found: ${path}`);
  error.name = 'NotFoundError';
  error.code = 'not_found';
  return error;
}

/** The bytes of `blob`, or of `start..end` of it. */
async function blobBytes(blob, start, end) {
  const part = start === undefined ? blob : blob.slice(start, end);
  return new Uint8Array(await part.arrayBuffer());
}

/**
 * A source over a FileSystemDirectoryHandle (from `showDirectoryPicker()`, a drop's
 * `getAsFileSystemHandle()`, or `navigator.storage.getDirectory()`). Directory handles are
 * looked up once per folder; each read takes a fresh `File` (a snapshot of the file).
 */
export function directoryHandleSource(root) {
  const folders = new Map([['', Promise.resolve(root)]]);

  function folder(path) {
    if (!folders.has(path)) {
      const at = path.lastIndexOf('/');
      const parent = at < 0 ? '' : path.slice(0, at);
      const name = path.slice(at + 1);
      const handle = folder(parent).then((dir) => dir.getDirectoryHandle(name));
      // A failed lookup may succeed later (the folder may be created): do not keep it.
      handle.catch(() => folders.delete(path));
      folders.set(path, handle);
    }
    return folders.get(path);
  }

  async function file(path) {
    const at = path.lastIndexOf('/');
    try {
      const dir = await folder(at < 0 ? '' : path.slice(0, at));
      const handle = await dir.getFileHandle(path.slice(at + 1));
      return await handle.getFile();
    } catch (error) {
      // NotFoundError, or TypeMismatchError where a folder stands in the path.
      if (error?.name === 'NotFoundError' || error?.name === 'TypeMismatchError') {
        throw notFound(path);
      }
      throw error;
    }
  }

  async function walk(dir, base, out) {
    for await (const [name, handle] of dir.entries()) {
      const path = base + name;
      if (handle.kind === 'directory') {
        if (base === '_delta_log/' && LOG_FILE.test(name)) throw notReadable(path, 'a folder');
        await walk(handle, `${path}/`, out);
      } else {
        const f = await handle.getFile();
        out.push({ path, size: f.size, lastModified: f.lastModified });
      }
    }
  }

  return {
    read: async (path, start, end) => blobBytes(await file(path), start, end),
    size: async (path) => (await file(path)).size,
    list: async (prefix) => {
      const dirPath = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
      let dir;
      try {
        dir = await folder(dirPath);
      } catch {
        return [];
      }
      const out = [];
      await walk(dir, dirPath === '' ? '' : `${dirPath}/`, out);
      return out;
    },
  };
}

/**
 * A source over the files of a picked folder (`<input type="file" webkitdirectory>`: each
 * file's `webkitRelativePath` starts with the folder's name) or any array of `File`s whose
 * `webkitRelativePath` (or `name`) is its path in the table.
 */
export function filesSource(fileList) {
  const byPath = new Map();
  let name = null;
  for (const f of Array.from(fileList)) {
    const relative = f.webkitRelativePath || f.name;
    const at = relative.indexOf('/');
    if (at >= 0 && f.webkitRelativePath) {
      name ??= relative.slice(0, at);
      byPath.set(relative.slice(at + 1), f);
    } else {
      byPath.set(relative, f);
    }
  }
  const file = (path) => {
    const f = byPath.get(path);
    if (f === undefined) {
      throw notFound(path);
    }
    return f;
  };
  const source = {
    read: async (path, start, end) => blobBytes(file(path), start, end),
    size: async (path) => file(path).size,
    list: async (prefix) => {
      // A folder named as a log file shows as the paths of the files inside it (an empty
      // one does not show at all).
      for (const path of byPath.keys()) {
        const inLog = /^_delta_log\/([^/]+)\//.exec(path);
        if (inLog && LOG_FILE.test(inLog[1])) throw notReadable(`_delta_log/${inLog[1]}`, 'a folder');
      }
      return [...byPath]
        .filter(([path]) => path.startsWith(prefix))
        .map(([path, f]) => ({ path, size: f.size, lastModified: f.lastModified }));
    },
  };
  return { source, name: name ?? 'files' };
}
