export * from "./discovery.js";
export * from "./scopes.js";
