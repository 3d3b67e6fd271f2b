// The install domain's door: the catalogue, the ownership manifest and the setup/update/rollback/uninstall steps.
export {
  AGENTS,
  type AgentName,
  CATALOGUE_OVERRIDE_ENV,
  type Catalogue,
  type CatalogueEntry,
  COMPILED_CATALOGUE,
  LOCKED_COMPONENTS,
  type LockedName,
  loadCatalogue,
} from "./catalogue.js";
export { COMPONENT_MANIFEST, type Component, currentPlatform, unsupportedReason } from "./components.js";
export { managedBinDir } from "./generation.js";
export {
  type AgentHealth,
  checkManagedAgents,
  type LifecycleDeps,
  planUninstall,
  probeUpdate,
  type RollbackResult,
  rollback,
  type SetupResult,
  setup,
  type UninstallPlan,
  type UninstallResult,
  type UpdateProbe,
  type UpdateResult,
  uninstall,
  update,
} from "./lifecycle.js";
export { type InstallManifest, readManifest } from "./manifest.js";
