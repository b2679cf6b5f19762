// Entry point: `node dist/server.js [options]`; run it directly in production: npm may not forward signals.
import { reportStartFailure, serve } from './serve.js'

serve(process.argv.slice(2)).catch(reportStartFailure)
