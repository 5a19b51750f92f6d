import { defineConfig } from 'vite';

// Relative asset URLs: the built app is served below /www/vite/ by `dar serve --www`.
export default defineConfig({
  base: './',
  logLevel: 'warn',
  optimizeDeps: { exclude: ['delta-arrow-reader'] },
});
