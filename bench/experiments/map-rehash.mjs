// The longest single Map#set and Array#push while each grows to a million entries: a Map doubles its
// table in one go (build-model.ts, PkIndex). `node bench/experiments/map-rehash.mjs`
const m = new Map(); let worst = 0; let at = 0
for (let i = 0; i < 1_000_000; i++) { const t = performance.now(); m.set(i * 7 + 13, i); const d = performance.now() - t; if (d > worst) { worst = d; at = i } }
console.log('Map: longest set', worst.toFixed(1), 'ms at', at)
const a = []; worst = 0
for (let i = 0; i < 1_000_000; i++) { const t = performance.now(); a.push(i * 1.5); const d = performance.now() - t; if (d > worst) { worst = d; at = i } }
console.log('Array: longest push', worst.toFixed(1), 'ms at', at)
