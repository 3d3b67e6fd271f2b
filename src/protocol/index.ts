export * from "./discovery.js";
export * from "./scopes.js";
export * from "./tools.js";
