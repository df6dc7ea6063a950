// Time to interactive through a cluster gateway, and bursts spread over nodes, with the unmodified npm `e2b` SDK.
// Container-backend nodes on this host (bench/lib/cluster-nodes.mjs: a private PostgreSQL, a shared-directory object
// store, a gateway; each node a warm pool of 2, 1 CPU and 512 MiB per sandbox).
//
//   tti:   one node; Sandbox.create + commands.run('true'), sequential, alternately straight to the node and through
//          the gateway (placement, forwarding, then every envd byte through the gateway); each sandbox killed after;
//          400 commands and 200 creates through the gateway first, as a gateway that has served a while has compiled
//          its paths (AENV_BENCH_WARM_CREATES sets how many creates); AENV_BENCH_PAUSE_MS (default 300) between two
//          measurements, while the node restores a pool member. Besides each kind's percentiles it prints the median of
//          the rounds' paired differences (a round measures every kind once), which drift over a run does not move.
//          AENV_BENCH_GATEWAY_B_JVM="<JVM options>" starts a second gateway with those options added and measures it
//          in the same rotation (an A/B of gateway settings in one run).
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
const gatewayBJvm = process.env.AENV_BENCH_GATEWAY_B_JVM?.split(' ').filter(Boolean)
const cluster = await startBenchCluster(lane, { nodes: mode === 'tti' ? 1 : 3, poolSize: 2, maxSandboxes: 40, gatewayBJvm })
const sdk = (server) => ({ apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 120_000 })
const direct = sdk(cluster.nodes[0])
const gated = sdk(cluster.gateway)
const gatedB = cluster.gatewayB && sdk(cluster.gatewayB)
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

// after each TTI the node restores a pool member in its place; the next one starts after this pause
const pauseMs = Number(process.env.AENV_BENCH_PAUSE_MS ?? 300)
const rows = []
try {
  if (mode === 'tti') {
    const kinds = [['node', direct], ['gateway', gated], ...(gatedB ? [['gateway B', gatedB]] : [])]
    const times = Object.fromEntries(kinds.map(([kind]) => [kind, []]))
    const parts = Object.fromEntries(kinds.map(([kind]) => [kind, { create: [], command: [] }]))
    // each round measures every kind once: a round's difference to the node is paired, so drift over the run cancels
    const differences = Object.fromEntries(kinds.map(([kind]) => [kind, []]))
    // a gateway that has served a while has compiled its request paths (the server's JVM runs C1 only, which compiles
    // a method after some hundred calls): 400 commands and 200 creates through each first
    const warmCreates = Number(process.env.AENV_BENCH_WARM_CREATES ?? 200)
    for (const [, opts] of kinds.slice(1)) {
      const warm = await Sandbox.create('base', opts)
      for (let i = 0; i < 400; i++) await warm.commands.run('true')
      await warm.kill()
      for (let i = 0; i < warmCreates; i++) await (await Sandbox.create('base', opts)).kill()
    }
    for (let i = -5; i < iterations; i++) { // 5 warm-up rounds; the order rotates every round
      const offset = ((i % kinds.length) + kinds.length) % kinds.length
      const round = {}
      for (const [kind, opts] of [...kinds.slice(offset), ...kinds.slice(0, offset)]) {
        const { ms, createMs, commandMs, sbx } = await tti(opts)
        await sbx.kill()
        if (i >= 0) {
          times[kind].push(ms)
          parts[kind].create.push(createMs)
          parts[kind].command.push(commandMs)
          round[kind] = ms
        }
        await delay(pauseMs) // the pool refills
      }
      if (i >= 0) for (const [kind] of kinds.slice(1)) differences[kind].push(round[kind] - round.node)
    }
    const label = (kind) => kind === 'node' ? 'straight' : kind
    for (const [kind] of kinds) rows.push([kind === 'node' ? 'TTI straight to the node' : `TTI through the ${kind}`, times[kind]])
    for (const [kind] of kinds) rows.push([`  of which Sandbox.create, ${label(kind)}`, parts[kind].create])
    for (const [kind] of kinds) rows.push([`  of which the first command, ${label(kind)}`, parts[kind].command])
    for (const [kind] of kinds.slice(1)) {
      const d = differences[kind]
      console.log(`${kind} adds at p50: ${(pct(times[kind], 50) - pct(times.node, 50)).toFixed(1)} ms (target: <= 3 ms);`
        + ` the rounds' paired differences: median ${pct(d, 50).toFixed(1)} ms, quartiles ${pct(d, 25).toFixed(1)}`
        + ` to ${pct(d, 75).toFixed(1)} ms`)
    }
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
