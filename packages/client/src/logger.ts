/** The logger SDK components accept: pino's shape, so a pino child logger can be passed as is. */
export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => undefined;

/** A logger that drops everything (the default of SDK components). */
export const silentLogger: ClientLogger = { debug: noop, info: noop, warn: noop, error: noop };

/** A logger that adds `bindings` to every line (as pino's child does). */
export function withBindings(log: ClientLogger, bindings: object): ClientLogger {
  return {
    debug: (obj, msg) => log.debug({ ...bindings, ...obj }, msg),
    info: (obj, msg) => log.info({ ...bindings, ...obj }, msg),
    warn: (obj, msg) => log.warn({ ...bindings, ...obj }, msg),
    error: (obj, msg) => log.error({ ...bindings, ...obj }, msg),
  };
}
