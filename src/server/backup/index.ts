// Backup and restore of a server tree (seed 000, "Backup e restauração"): what other modules may import.
export { type BackupReport, type CreateBackupOptions, createBackup } from "./create.js";
export {
  BACKUP_FORMAT_VERSION,
  type BackupManifest,
  type BackupStores,
  EXCLUDED,
  SUPPORTED_SCHEMAS,
} from "./manifest.js";
export { type RestoreOptions, type RestoreReport, restoreBackup } from "./restore.js";
export { changeLines } from "./restore-notes.js";
export { runningServerReason, serverPidFile } from "./running.js";
export { type BackupListing, listBackups, type VerifiedBackup, verifyBackup } from "./verify.js";
