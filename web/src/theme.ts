// The colour theme: the system's (prefers-color-scheme) unless the person chose light or dark, remembered in
// localStorage and applied as <html data-theme> before React renders (the CSP allows no inline script).

export const THEME_CHOICES = ["system", "light", "dark"] as const;
export type ThemeChoice = (typeof THEME_CHOICES)[number];

/** The localStorage key holding the person's choice. */
export const THEME_KEY = "ivoai-console-theme";

function isThemeChoice(value: unknown): value is ThemeChoice {
  return THEME_CHOICES.some((choice) => choice === value);
}

/** The remembered choice, "system" when none (or storage is blocked). */
export function storedTheme(): ThemeChoice {
  try {
    const value = window.localStorage.getItem(THEME_KEY);
    return isThemeChoice(value) ? value : "system";
  } catch {
    return "system";
  }
}

/** Sets data-theme on <html> ("system" removes it, so the stylesheet's media query decides). */
export function applyTheme(choice: ThemeChoice): void {
  const root = document.documentElement;
  if (choice === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", choice);
}

/** Applies a choice and remembers it for the next visit. */
export function chooseTheme(choice: ThemeChoice): void {
  applyTheme(choice);
  try {
    if (choice === "system") window.localStorage.removeItem(THEME_KEY);
    else window.localStorage.setItem(THEME_KEY, choice);
  } catch {
    // Storage blocked (private mode, policy): the choice lasts for this page only.
  }
}
