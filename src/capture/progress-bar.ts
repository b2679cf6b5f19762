// The capture's progress bar on a terminal's stderr (cli-progress); off a terminal, only the summary at the end.
import { Presets, SingleBar } from 'cli-progress'
import type { WalkProgress } from './walk-source.js'

interface CaptureProgress extends WalkProgress {
  retried: () => void
  /** Removes the bar: what is printed next starts on a clean line. */
  stop: () => void
}

export function progressBar (stream: NodeJS.WriteStream): CaptureProgress | undefined {
  if (stream.isTTY !== true) return undefined
  const bar = new SingleBar({
    stream,
    format: 'capture [{bar}] {percentage}% | {value}/{total} requests | {items} items | {retries} retries | {duration_formatted} elapsed, ETA {eta_formatted}',
    hideCursor: true,
    clearOnComplete: true,
    // The command installs its own SIGINT/SIGTERM handling, which stops the bar.
    gracefulExit: false,
    // The total grows as counts are learned: an ETA over many requests moves less.
    etaBuffer: 200
  }, Presets.shades_classic)
  let total = 0
  let items = 0
  let retries = 0
  bar.start(0, 0, { items, retries })
  return {
    planned: requests => {
      total += requests
      bar.setTotal(total)
    },
    fetched: () => { bar.increment(1, { items, retries }) },
    found: added => { items += added },
    retried: () => { retries++ },
    stop: () => { bar.stop() }
  }
}
