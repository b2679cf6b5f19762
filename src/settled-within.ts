// A wait with a deadline: shutdown must not hang on a close that never ends.

/** Whether `work` settled within `ms`; its rejection is passed on. */
export async function settledWithin (work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<false>(resolve => { timer = setTimeout(resolve, ms, false) })
  try {
    return await Promise.race([work.then(() => true), late])
  } finally {
    clearTimeout(timer)
  }
}
