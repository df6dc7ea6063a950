// The console is served by the server under /console/; `vite build` writes it where build.sh says (--outDir).
import { defineConfig } from 'vite'

export default defineConfig({
  base: '/console/',
  build: {
    target: 'es2022',
    sourcemap: false,
    // no inline data: URLs, no inline module-preload polyfill: the console's CSP allows files from its origin only
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 400,
  },
})
