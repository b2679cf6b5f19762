// The string formats our schemas use, registered with TypeBox: importing this module makes `format: 'date'` checked.
import { FormatRegistry } from '@sinclair/typebox'

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-](\d{2}):?(\d{2}))?$/

function daysInMonth (year: number, month: number): number {
  return month === 2
    ? ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28)
    : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number
}

/** `YYYY-MM-DD` naming a day that exists (year 0001–9999, as Python's `date` accepts). */
export function isCalendarDate (value: string): boolean {
  const m = DATE.exec(value)
  if (m === null) return false
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

/** An ISO-8601 timestamp: a calendar date, a valid time of day, an optional offset. */
export function isDateTime (value: string): boolean {
  const m = DATE_TIME.exec(value)
  if (m === null || !isCalendarDate(m[1] as string)) return false
  const [hour, minute, second, offHour, offMinute] = [m[2], m[3], m[4], m[5], m[6]].map(x => Number(x ?? 0)) as number[]
  // 60 seconds is a leap second, which ISO-8601 allows.
  return hour! <= 23 && minute! <= 59 && second! <= 60 && offHour! <= 23 && offMinute! <= 59
}

FormatRegistry.Set('date', isCalendarDate)
FormatRegistry.Set('date-time', isDateTime)
