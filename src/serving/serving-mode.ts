// WORKERS=1: the one thread serves and loads; more: that many serving threads share the port (ADR 029).
import { ConfigError } from '../errors.js'

export function hasReusePort (version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12)
}

/** 0 when this thread serves. */
export function servingThreads (workers: number, version: string = process.versions.node): number {
  if (workers <= 1) return 0
  if (!hasReusePort(version)) {
    throw new ConfigError(
      `WORKERS=${workers} needs Node 22.12 or later (Node 24 is recommended): serving threads share the port with reusePort, which Node ${version} lacks. Set WORKERS=1 here.`
    )
  }
  return workers
}
