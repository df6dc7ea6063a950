// Time to interactive through a cluster gateway, and bursts spread over nodes, with the unmodified npm `e2b` SDK.
// Container-backend nodes on this host (bench/lib/cluster-nodes.mjs: a private PostgreSQL, a shared-directory object
// store, a gateway; each node a warm pool of 2, 1 CPU and 512 MiB per sandbox).
//
//   tti:   one node; Sandbox.create + commands.run('true'), sequential, alternately straight to the node and through
//          the gateway (placement, forwarding, then every envd byte through the gateway); each sandbox killed after;
//          400 commands and 200 creates through the gateway first, as a gateway that has served a while has compiled
//          its paths (AENV_BENCH_WARM_CREATES sets how many creates).
//   burst: three nodes; a 20-way burst of creates (+ first command) straight to one node, then a 60-way burst through
//          the gateway, which spreads it over the three; each burst after the pools refilled, AENV_BENCH_BURSTS times.
//          All three nodes share this host's CPUs: a burst of 60 is three times the work of 20 on the same cores, so
//          this measures the gateway's spreading and overhead, not what three machines would give.
//
//   node bench/cluster/tti.mjs [tti|burst] [iterations]       (as root, after scripts/setup-host.sh and
//                                                               mvn -B -q -DskipTests package)
import os from 'node:os'
import { setTimeout as delay } from 'node:timers/promises'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchCluster } from '../lib/cluster-nodes.mjs'
import { claimLane } from '../lib/lane.mjs'

const mode = process.argv[2] ?? 'tti'
const iterations = Number(process.argv[3] ?? (mode === 'tti' ? 40 : 2))
if (!['tti', 'burst'].includes(mode)) throw new Error('usage: tti.mjs [tti|burst] [iterations]')
delete process.env.E2B_DEBUG
const lane = await claimLane()
const cluster = await startBenchCluster(lane, { nodes: mode === 'tti' ? 1 : 3, poolSize: 2, maxSandboxes: 40 })
const sdk = (server) => ({ apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 })
const direct = sdk(cluster.nodes[0])
const gated = sdk(cluster.gateway)
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

async function tti(opts) {
  const t = performance.now()
  const sbx = await Sandbox.create('base', opts)
  const created = performance.now()
  await sbx.commands.run('true')
  const done = performance.now()
  return { ms: done - t, createMs: created - t, commandMs: done - created, sbx }
}

async function burst(opts, n) {
  const runs = await Promise.all(Array.from({ length: n }, () => tti(opts)))
  await Promise.all(runs.map((r) => r.sbx.kill()))
  return runs.map((r) => r.ms)
}

const rows = []
try {
  if (mode === 'tti') {
    const times = { node: [], gateway: [] }
    const parts = { node: { create: [], command: [] }, gateway: { create: [], command: [] } }
    // a gateway that has served a while has compiled its request paths (the server's JVM runs C1 only, which compiles
    // a method after some hundred calls): 400 commands and 200 creates through it first
    const warm = await Sandbox.create('base', gated)
    for (let i = 0; i < 400; i++) await warm.commands.run('true')
    await warm.kill()
    const warmCreates = Number(process.env.AENV_BENCH_WARM_CREATES ?? 200)
    for (let i = 0; i < warmCreates; i++) await (await Sandbox.create('base', gated)).kill()
    for (let i = -5; i < iterations; i++) { // 5 warm-up rounds
      for (const [kind, opts] of i % 2 === 0 ? [['node', direct], ['gateway', gated]] : [['gateway', gated], ['node', direct]]) {
        const { ms, createMs, commandMs, sbx } = await tti(opts)
        await sbx.kill()
        if (i >= 0) {
          times[kind].push(ms)
          parts[kind].create.push(createMs)
          parts[kind].command.push(commandMs)
        }
        await delay(300) // the pool refills
      }
    }
    rows.push(['TTI straight to the node', times.node], ['TTI through the gateway', times.gateway],
      ['  of which Sandbox.create, straight', parts.node.create], ['  of which Sandbox.create, gateway', parts.gateway.create],
      ['  of which the first command, straight', parts.node.command],
      ['  of which the first command, gateway', parts.gateway.command])
    console.log(`gateway adds at p50: ${(pct(times.gateway, 50) - pct(times.node, 50)).toFixed(1)} ms (target: <= 3 ms)`)
  } else {
    const one = []
    const three = []
    await burst(gated, 6) // warm-up on every node
    for (let b = 0; b < iterations; b++) {
      await delay(5000)
      one.push(...await burst(direct, 20))
      await delay(5000)
      three.push(...await burst(gated, 60))
    }
    rows.push(['burst of 20 on one node', one], ['burst of 60 over three nodes (gateway)', three])
  }
} finally {
  await cluster.stop().catch((e) => console.error('stopping the cluster:', e.message))
}
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0].model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
  `load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${mode} x ${iterations}; ${new Date().toISOString()}`)
console.log('| run | n | p50 ms | p95 ms | max ms |')
console.log('|---|---|---|---|---|')
for (const [label, xs] of rows) {
  console.log(`| ${label} | ${xs.length} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 95).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`)
}
