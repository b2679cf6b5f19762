// Which loop answers the public port: with WORKERS=1 the process's one thread (which also loads), with more that
// many serving threads over one model, sharing the port through SO_REUSEPORT (ADR 029).
import { ConfigError } from '../errors.js'

/** Whether this Node has `reusePort` for `listen()`: 22.12 or later in 22, 23.1 or later. */
export function hasReusePort (version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12)
}

/** The serving threads to start for `workers`: 0 when this thread serves. Throws where Node cannot share a port. */
export function servingThreads (workers: number, version: string = process.versions.node): number {
  if (workers <= 1) return 0
  if (!hasReusePort(version)) {
    throw new ConfigError(
      `WORKERS=${workers} needs Node 22.12 or later (Node 24 is recommended): serving threads share the port with reusePort, which Node ${version} lacks. Set WORKERS=1 here.`
    )
  }
  return workers
}
