// webpack 5: `new URL('…wasm', import.meta.url)` in the package is emitted as an asset with
// no extra configuration.
import { fileURLToPath } from 'node:url';

export default {
  mode: 'production',
  entry: './entry.js',
  output: {
    path: fileURLToPath(new URL('./dist/webpack/', import.meta.url)),
    filename: 'main.js',
    module: true,
    chunkFormat: 'module',
  },
  experiments: { outputModule: true },
  performance: { hints: false },
};
