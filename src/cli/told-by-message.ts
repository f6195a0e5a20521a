/** The errors the CLI reports by their message alone, with no stack trace: each says all an operator needs. */
import { ConfigError } from '../config.js';
import { UnreadableLogError } from '../eventstore/embedded.js';
import { ImportAppendError, ImportError } from '../importer/import.js';
import { DataDirError } from '../runtime.js';

/** A refused file, an import stopped on the way, a bad configuration, a DATA_DIR that cannot be one, a log that cannot be opened. */
export function toldByMessage(error: unknown): error is Error {
  return (
    error instanceof ImportError ||
    error instanceof ImportAppendError ||
    error instanceof ConfigError ||
    error instanceof DataDirError ||
    error instanceof UnreadableLogError
  );
}
