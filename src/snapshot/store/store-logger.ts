// The log the store and what it drives (versions, sources, images) write to: the app's logger, or nothing.
export interface StoreLogger {
  info: (fields: object, message: string) => void
  warn: (fields: object, message: string) => void
  error: (fields: object, message: string) => void
}
