import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `npm run dev` proxies the API to a running `maestro serve` (MAESTRO_URL).
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
  server: {
    proxy: {
      '/api': { target: process.env.MAESTRO_URL ?? 'http://127.0.0.1:8080', changeOrigin: true },
      // The SSO sign-in's redirects and cookies (a provider's redirect_uri
      // must then name the dev server's /auth/callback).
      '/auth': { target: process.env.MAESTRO_URL ?? 'http://127.0.0.1:8080', changeOrigin: true },
    },
  },
});
