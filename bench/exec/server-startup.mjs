// The server's start-up with and without its AOT cache (agentenv-server/target/agentenv-server.aot, built by
// `mvn package`): the server jar with the mock backend and serve.sh's JVM options, started 6 times each way
// (alternating), timed from spawn to GET /health 204, then one REST create; the server's CPU time (from /proc) by then.
//   mvn -B -q -pl agentenv-server -am package -DskipTests && node bench/exec/server-startup.mjs [starts per variant]
import { readFileSync } from 'node:fs'
import { startServer, SERVE_JVM_OPTIONS } from '../../e2e/lib/control-plane-harness.mjs'

const starts = Number(process.argv[2] ?? 6)
const withCache = SERVE_JVM_OPTIONS
const without = SERVE_JVM_OPTIONS.filter((o) => !o.startsWith('-XX:AOTCache'))
if (withCache.length === without.length) throw new Error('no AOT cache built (agentenv-server/target/agentenv-server.aot)')
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
const results = { 'AOT cache': [], 'no cache': [] }
for (let i = 0; i < starts; i++) {
  for (const [name, jvmOptions] of [['AOT cache', withCache], ['no cache', without]]) {
    const t0 = performance.now()
    const server = await startServer({ backend: 'mock', jvmOptions })
    try {
      const ready = performance.now() - t0
      const t1 = performance.now()
      const res = await fetch(`${server.url}/v2/sandboxes`, {
        method: 'POST', headers: { 'X-API-Key': server.apiKey, 'content-type': 'application/json' }, body: '{"templateID":"base"}',
      })
      if (res.status !== 201) throw new Error(`create answered ${res.status}`)
      results[name].push({ ready, create: performance.now() - t1, cpu: cpuMs(server.pid) })
    } finally {
      await server.stop()
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
for (const [name, runs] of Object.entries(results)) {
  console.log(`${name.padEnd(10)} ready median ${median(runs.map((r) => r.ready)).toFixed(0)} ms (min ${Math.min(...runs.map((r) => r.ready)).toFixed(0)}), ` +
    `first create median ${median(runs.map((r) => r.create)).toFixed(1)} ms, server CPU by then median ${median(runs.map((r) => r.cpu))} ms`)
}
console.log(`load average ${load}`)
