/**
 * A `.wasm` file of the package imported as a compiled module, as Cloudflare Workers
 * (workerd, Wrangler) and bundlers with a WebAssembly plugin give it:
 * `import wasm from 'delta-arrow-reader/delta_arrow_reader_bg.wasm'`, then `await init(wasm)`
 * (or `initParquet` with `delta-arrow-reader/parquet_writer.wasm`).
 */
declare global {
  // Declared empty for a project whose lib has no DOM; merges with the DOM's own.
  namespace WebAssembly {
    interface Module {}
  }
}
declare const module: WebAssembly.Module;
export default module;
