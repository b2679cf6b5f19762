// What a version's arrays are, declared once (issue 58): their kinds, read by the parts, the thread handoff and images.

/** By the name an image's sections and a thread's message give a kind. */
export const KINDS = {
  u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f64: Float64Array
} as const
export type Kind = keyof typeof KINDS
export type View = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array

export function kindOf (view: View): Kind {
  for (const [kind, Kind] of Object.entries(KINDS)) if (view instanceof Kind) return kind as Kind
  throw new Error('not an array a version holds')
}
