import t from 'tap'
import { isCalendarDate, isDateTime } from '../../src/schemas/formats.js'

t.test('a calendar date must name a day that exists', async t => {
  for (const good of ['2024-02-29', '2000-02-29', '2023-12-31', '0001-01-01', '9999-12-31', '2024-04-30']) {
    t.ok(isCalendarDate(good), good)
  }
  for (const bad of ['2023-02-29', '1900-02-29', '2024-02-30', '2024-04-31', '2024-13-01', '2024-00-10',
    '2024-01-00', '0000-01-01', '2024-1-01', '24-01-01', '2024-01-01T00:00:00Z', ' 2024-01-01', '']) {
    t.notOk(isCalendarDate(bad), bad)
  }
})

t.test('a timestamp is ISO-8601 with a real date and time', async t => {
  for (const good of ['2026-11-20T09:30:00Z', '2026-11-20T09:30:00.123+01:00', '2026-11-20 09:30', '2026-11-20T23:59:60Z', '2026-11-20T09:30:00-0530']) {
    t.ok(isDateTime(good), good)
  }
  for (const bad of ['2026-11-20', '2026-02-30T09:30:00Z', '2026-11-20T24:00:00Z', '2026-11-20T09:61:00Z', 'yesterday', '2026-11-20T09:30:00+25:00']) {
    t.notOk(isDateTime(bad), bad)
  }
})
