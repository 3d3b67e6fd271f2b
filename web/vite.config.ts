// The web console's build: static files for the gateway to serve at /console (same origin, no CDN).
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/console/",
  plugins: [react()],
  build: {
    outDir: "../dist/console",
    emptyOutDir: true,
    // Under the strict CSP nothing may be inlined: no polyfill script, no data: modules.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: "es2022",
  },
});
