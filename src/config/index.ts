export {
  ConfigError,
  ConfigFileError,
  describeConfig,
  ENV_VARS,
  LOG_LEVELS,
  PACKAGED_CONFIG_FILE,
  resolveConfig,
  type CliFlags,
  type LogLevel,
  type ResolveConfigInput,
  type ResolvedConfig,
} from './resolve.js';
export { Secret } from './secret.js';
