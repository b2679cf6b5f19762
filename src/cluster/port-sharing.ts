// How a cluster's workers share the port. node:cluster's default has the primary accept every connection
// and pass it to a worker over IPC: one more process on every connection's path. Node 22.12 and 23.1 added
// `reusePort` (SO_REUSEPORT): each worker then binds the port itself and the kernel spreads the
// connections, with nothing in between. Node 20 has no such option, so there the primary stays in between.
import cluster from 'node:cluster'

export interface PortSharing {
  /** Each worker binds the port on its own (`exclusive`: not through the primary). */
  exclusive: true
  reusePort: true
}

/** Whether this Node has `reusePort` for `listen()`: 22.12 or later in 22, 23.1 or later. */
export function hasReusePort (version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12)
}

/**
 * The listen options that let this worker bind `port` itself, or null where the primary must share it:
 * outside a worker, on a Node without `reusePort`, and for port 0, which would give each worker a port
 * of its own (the primary's sharing gives them all the one it picked).
 */
export function portSharing (port: number, { worker = cluster.isWorker, version = process.versions.node }: { worker?: boolean, version?: string } = {}): PortSharing | null {
  if (!worker || port === 0 || !hasReusePort(version)) return null
  return { exclusive: true, reusePort: true }
}
