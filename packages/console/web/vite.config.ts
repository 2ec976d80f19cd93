import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The console's single-page app. `npm run build:web` writes it to ../dist/web, which the console server
// serves; everything (fonts, icons) is bundled, nothing is loaded from the internet.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 800,
    // Fonts and images stay files: the console's Content-Security-Policy allows fonts from itself only, not data: URLs.
    assetsInlineLimit: 0,
  },
  server: {
    // `npx vite --config web/vite.config.ts` for UI work: API and WebSockets go to a console on 3113.
    port: 3114,
    proxy: { '/_console': { target: 'http://127.0.0.1:3113', ws: true } },
  },
});
