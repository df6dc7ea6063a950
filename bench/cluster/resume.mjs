// Resume on another node vs on the same node, through a cluster gateway and the unmodified npm `e2b` SDK. Two
// container-backend nodes on this host (bench/lib/cluster-nodes.mjs: a private PostgreSQL, a shared-directory object
// store, a gateway). Each round: a sandbox with a background `sleep` is created on n1 and paused (its state stored in
// the object store), resumed on n1 (local), paused again, then n1 is drained and the resume lands on n2 (remote: the
// state is fetched from the object store first), paused once more and resumed on n2 (local again); a resume is
// `Sandbox.connect()` + `commands.run('true')`, as bench/container/pause.mjs measures it. The local and remote resumes
// of a round run back to back, so both see the same load. The nodes' own logs give the pause's time spent storing the
// state (PauseOperation "share_ms") and the remote resume's fetch (Artifacts "artifacts fetched", took_ms).
//
//   node bench/cluster/resume.mjs [rounds]        (as root, after scripts/setup-host.sh and
//                                                   mvn -B -q -DskipTests package)
import os from 'node:os'
import { Sandbox } from '../../e2e/node_modules/e2b/dist/index.mjs'
import { startBenchCluster } from '../lib/cluster-nodes.mjs'
import { claimLane } from '../lib/lane.mjs'

const rounds = Number(process.argv[2] ?? 10)
delete process.env.E2B_DEBUG
const lane = await claimLane()
const cluster = await startBenchCluster(lane, { nodes: 2, poolSize: 1, maxSandboxes: 8 })
const opts = { apiUrl: cluster.gateway.url, sandboxUrl: cluster.gateway.url, apiKey: cluster.gateway.apiKey, requestTimeoutMs: 60_000 }
const times = { pause: [], local: [], remote: [] }
const gatewaySees = () => new Promise((resolve) => setTimeout(resolve, 1200)) // the gateway re-reads nodes every 0.5 s

async function timed(list, fn) {
  const t = performance.now()
  const result = await fn()
  list.push(performance.now() - t)
  return result
}

async function resume(id, list) {
  return timed(list, async () => {
    const sbx = await Sandbox.connect(id, opts)
    await sbx.commands.run('true')
    return sbx
  })
}

try {
  for (let r = -1; r < rounds; r++) { // round -1 warms both nodes up and is not counted
    const t = r < 0 ? { pause: [], local: [], remote: [] } : times
    await cluster.setStatus('n1', 'ready')
    await cluster.setStatus('n2', 'draining')
    await gatewaySees()
    let sbx = await Sandbox.create('base', { ...opts, timeoutMs: 600_000 })
    await sbx.commands.run('sleep 100000', { background: true })
    await timed(t.pause, () => sbx.betaPause())
    sbx = await resume(sbx.sandboxId, t.local)
    await timed(t.pause, () => sbx.betaPause())
    await cluster.setStatus('n2', 'ready')
    await cluster.setStatus('n1', 'draining')
    await gatewaySees()
    sbx = await resume(sbx.sandboxId, t.remote)
    const alive = await sbx.commands.run('pgrep -x sleep')
    if (alive.exitCode !== 0) throw new Error('the background process did not survive the move')
    await timed(t.pause, () => sbx.betaPause())
    sbx = await resume(sbx.sandboxId, t.local)
    await sbx.kill()
  }
} finally {
  await cluster.stop().catch((e) => console.error('stopping the cluster:', e.message))
}

const logs = cluster.nodes.map((n) => n.output()).join('\n')
const field = (line, key) => Number(new RegExp(`${key}=(\\d+)`).exec(line)?.[1])
const shares = logs.split('\n').filter((l) => l.includes('sandbox paused') && l.includes('share_ms=')).map((l) => field(l, 'share_ms'))
const fetches = logs.split('\n').filter((l) => l.includes('artifacts fetched')).map((l) => field(l, 'took_ms'))
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const row = (label, xs) => `| ${label} | ${xs.length} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 90).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0].model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
  `load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${rounds} rounds; ${new Date().toISOString()}`)
console.log('| step | n | p50 ms | p90 ms | max ms |')
console.log('|---|---|---|---|---|')
console.log(row('pause (state stored in the object store)', times.pause))
console.log(row('resume on the same node (connect + first command)', times.local))
console.log(row('resume on another node (connect + first command)', times.remote))
console.log(row('  of which the pause stored the state (share_ms, all pauses)', shares))
console.log(row('  of which the remote resume fetched it (took_ms)', fetches))
console.log(`remote / local resume at p50: ${(pct(times.remote, 50) / pct(times.local, 50)).toFixed(2)}x (target: <= 2x)`)
