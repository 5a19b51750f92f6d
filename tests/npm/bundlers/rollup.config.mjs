// Rollup: node-resolve finds the package, and the import-meta-assets plugin emits the files
// the package names with `new URL('…', import.meta.url)` (the .wasm files). The package's
// worker is a module with imports of its own, not an asset: it is a second input, written as
// `worker.js` beside `main.js` (where the bundle's `new URL('./worker.js', import.meta.url)`
// looks), and the plugin leaves the module that names it (`remote.js`) alone.
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { importMetaAssets } from '@web/rollup-plugin-import-meta-assets';

export default {
  input: { main: 'entry.js', worker: 'node_modules/delta-arrow-reader/worker.js' },
  output: { dir: 'dist/rollup', format: 'es', entryFileNames: '[name].js' },
  plugins: [
    nodeResolve({ browser: true }),
    importMetaAssets({ exclude: ['**/delta-arrow-reader/remote.js'] }),
  ],
};
