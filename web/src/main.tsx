// The console's entry point: mounts the app into #root.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <main>
        <h1>ivoai console</h1>
      </main>
    </StrictMode>,
  );
}
