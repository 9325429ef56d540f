/**
 * The logger Fastify gives each request (`request.log`, `reply.log`), built on first use.
 *
 * Fastify's default makes a pino child with the request id's binding for every request,
 * and pino serializes that binding into a string when it makes the child. Most requests
 * never log through it: the access line (plugins/access-log.ts) is written directly, so
 * only errors, warnings and debug lines need the child. This stands in for it and makes
 * the real child the first time a line is logged or a child of it is asked for; the lines
 * are the same as the default's.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #opts: ChildLoggerOptions

  constructor(parent: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#opts = opts
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#opts)
    return this.#child
  }

  #log(method: Method, args: unknown[]): void {
    const real = this.#real()
    Reflect.apply(real[method], real, args)
  }

  /** The child's level without making it: the route's own level if it has one, else the parent's. */
  get level(): string {
    return this.#child?.level ?? this.#opts.level ?? this.#parent.level
  }

  set level(level: string) {
    this.#real().level = level
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args)
  }

  error(...args: unknown[]): void {
    this.#log('error', args)
  }

  warn(...args: unknown[]): void {
    this.#log('warn', args)
  }

  info(...args: unknown[]): void {
    this.#log('info', args)
  }

  debug(...args: unknown[]): void {
    this.#log('debug', args)
  }

  trace(...args: unknown[]): void {
    this.#log('trace', args)
  }

  silent(...args: unknown[]): void {
    this.#log('silent', args)
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options)
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, made on first use. */
export function requestLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, opts)
}
