// Rollup: node-resolve finds the package, and the import-meta-assets plugin emits the files
// the package names with `new URL('…', import.meta.url)` (the .wasm, the worker).
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { importMetaAssets } from '@web/rollup-plugin-import-meta-assets';

export default {
  input: 'entry.js',
  output: { dir: 'dist/rollup', format: 'es', entryFileNames: 'main.js' },
  plugins: [nodeResolve({ browser: true }), importMetaAssets()],
};
