// The console's entry point: mounts the app into #root (styles come from one CSS file Vite extracts).
import "./styles.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ConsoleApp } from "./app.js";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <ConsoleApp />
    </StrictMode>,
  );
}
