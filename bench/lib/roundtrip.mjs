// Sequential HTTP round trips on keep-alive connections, two ways interleaved (so that both see the same machine),
// and their percentiles: what bench/proxy/roundtrip.mjs and bench/cluster/gateway.mjs compare.
import { request } from 'node:http'

/** One request to `target` (node:http options: host/port or socketPath, agent); resolves to its time in ms. */
export function call(target, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const req = request({ ...target, method, path, headers }, (res) => {
      res.on('data', () => {})
      res.on('end', () => {
        if (res.statusCode >= 300) reject(new Error(`${method} ${path} -> ${res.statusCode}`))
        else resolve(Number(process.hrtime.bigint() - started) / 1e6)
      })
    })
    req.on('error', reject)
    if (body !== undefined) req.end(body)
    else req.end()
  })
}

/** The p-th percentile of an ascending array. */
export const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/**
 * `warmup + n` rounds of one request each way, alternating; rows `{ label, kind, p50, p90, p99 }` for the two ways
 * (`ways` maps a kind to `{ target, headers }`), warm-up rounds left out.
 */
export async function interleaved(label, ways, method, path, body, { n, warmup }) {
  const kinds = Object.keys(ways)
  const samples = Object.fromEntries(kinds.map((k) => [k, []]))
  for (let round = 0; round < warmup + n; round++) {
    for (const kind of kinds) {
      const ms = await call(ways[kind].target, method, path, ways[kind].headers, body)
      if (round >= warmup) samples[kind].push(ms)
    }
  }
  return kinds.map((kind) => {
    const s = samples[kind].sort((a, b) => a - b)
    return { label, kind, p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99) }
  })
}
