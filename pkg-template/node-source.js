// A byte source over a local folder in Node.js (node:fs ranged reads), for
// `DeltaTable.open('/abs/path')` and `DeltaTable.open('file:///abs/path/')`. Only regular
// files are opened: a FIFO or device in a table is refused before it is opened (opening a
// FIFO would wait for a writer for ever), and listing skips everything but regular files and
// folders.
import { open, readdir, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LOG_FILE, notReadable } from './sources.js';

/** `{ source, location }` for the table folder at `target` (a path or a `file:` URL). */
export function nodeFolder(target) {
  const root = /^file:/i.test(target) ? localPath(target) : resolve(target);
  const full = (path) => join(root, ...path.split('/'));

  async function regular(path) {
    let info;
    try {
      info = await stat(full(path));
    } catch (error) {
      // A file where the path needs a folder (the table is a file, or its `_delta_log` is):
      // nothing is there, so a table that is a file is not a table.
      if (error?.code === 'ENOTDIR') {
        throw Object.assign(new Error(`${path}: no such file (${error.message})`), { code: 'not_found' });
      }
      throw error;
    }
    if (!info.isFile()) {
      throw Object.assign(new Error(`${path} is not a regular file (a folder, FIFO, device or socket)`), {
        code: 'not_regular',
      });
    }
    return info;
  }

  async function read(path, start, end) {
    await regular(path);
    const handle = await open(full(path), 'r');
    try {
      if (start === undefined) {
        return new Uint8Array(await handle.readFile());
      }
      const length = end - start;
      const buffer = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(buffer, done, length - done, start + done);
        if (bytesRead === 0) {
          break;
        }
        done += bytesRead;
      }
      return done === length ? buffer : buffer.subarray(0, done);
    } finally {
      await handle.close();
    }
  }

  async function walk(dir, base, out) {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (error?.code === 'ENOENT' || error?.code === 'ENOTDIR') {
        return;
      }
      throw error;
    }
    for (const entry of entries) {
      const path = base + entry.name;
      // A commit or checkpoint the listing would leave out (a folder, a FIFO, a link to
      // nothing) would make the log seem to end before it: an older version read as the
      // latest. Refused, as natively.
      const logFile = base === '_delta_log/' && LOG_FILE.test(entry.name);
      let info;
      try {
        info = await stat(join(dir, entry.name));
      } catch (error) {
        // A dangling link or a file removed while listing: not an object.
        if (error?.code === 'ENOENT') {
          if (logFile && entry.isSymbolicLink()) throw notReadable(path, 'a symbolic link to nothing');
          continue;
        }
        throw error;
      }
      if (logFile && !info.isFile()) {
        throw notReadable(path, 'not a regular file (a folder, FIFO, device or socket)');
      }
      if (info.isDirectory()) {
        await walk(join(dir, entry.name), `${path}/`, out);
      } else if (info.isFile()) {
        out.push({ path, size: info.size, lastModified: info.mtimeMs });
      }
    }
  }

  const source = {
    read,
    size: async (path) => (await regular(path)).size,
    list: async (prefix) => {
      const dirPath = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
      const out = [];
      await walk(dirPath === '' ? root : full(dirPath), dirPath === '' ? '' : `${dirPath}/`, out);
      return out;
    },
  };
  /** Before the open: a folder that does not exist, or a file given as the table, is named
   * as such (not as "no _delta_log found" at a path that is not there). */
  async function check() {
    let info;
    try {
      info = await stat(root);
    } catch (error) {
      if (error?.code === 'ENOENT' || error?.code === 'ENOTDIR') {
        // `not_a_table`, as natively: what is there is not a table (nothing is).
        throw Object.assign(new Error(`not a Delta table: no such folder: ${root}`), { name: 'DeltaError', code: 'not_a_table', phase: 'load' });
      }
      throw error;
    }
    if (!info.isDirectory()) {
      throw Object.assign(new Error(`not a Delta table: ${root} is a file, not a table's folder`), {
        name: 'DeltaError',
        code: 'not_a_table',
        phase: 'load',
      });
    }
  }
  return { source, check, location: pathToFileURL(root.endsWith(sep) ? root : root + sep).href };
}

/** The local path of a `file:` URL; one Node cannot read (another host, an encoded `/`) is
 * refused as an invalid location, as natively. */
function localPath(url) {
  try {
    return fileURLToPath(url);
  } catch (error) {
    throw Object.assign(new TypeError(`${url} is not a local file URL: ${error.message}`), {
      name: 'DeltaError',
      code: 'invalid_location',
      phase: 'load',
    });
  }
}
