// Sandbox metrics and logs through the unmodified npm `e2b` SDK (getMetrics) and plain HTTP, against the server jar
// with the mock backend. The mock's FakeEnvd is the guest agent: it reports metrics derived from the template's
// resources (base: 2 CPUs, 512 MiB, 1024 MiB disk; 1.5 % CPU, a quarter of the memory used) and an empty journal.
// A real-sandbox getMetrics test comes with the container backend.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox } from 'e2b'
import { startServer } from '../lib/control-plane-harness.mjs'

const MIB = 1024 * 1024

let server
let opts

before(async () => {
  delete process.env.E2B_DEBUG // any value turns on the SDK's debug mode, where getMetrics returns [] without a call
  server = await startServer({ backend: 'mock' })
  opts = { apiUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 30_000 }
})

after(async () => {
  if (server) await server.stop()
})

async function api(path) {
  const res = await fetch(`${server.url}${path}`, { headers: { 'X-API-Key': server.apiKey } })
  return { status: res.status, body: await res.json() }
}

test('getMetrics of a running sandbox returns the guest agent\'s reading and timestamp', async () => {
  const sbx = await Sandbox.create('base', { ...opts, timeoutMs: 120_000 })
  try {
    const metrics = await sbx.getMetrics()
    assert.equal(metrics.length, 1)
    const [m] = metrics
    assert.ok(m.timestamp instanceof Date && !Number.isNaN(m.timestamp.getTime()), `timestamp ${m.timestamp}`)
    assert.ok(Math.abs(m.timestamp.getTime() - Date.now()) < 60_000, 'the reading is recent')
    assert.equal(m.cpuCount, 2)
    assert.equal(m.cpuUsedPct, 1.5)
    assert.equal(m.memTotal, 512 * MIB)
    assert.equal(m.memUsed, 128 * MIB)
    assert.equal(m.diskTotal, 1024 * MIB)

    const same = await Sandbox.getMetrics(sbx.sandboxId, opts)
    assert.deepEqual(same, metrics)
    const later = await Sandbox.getMetrics(sbx.sandboxId, { ...opts, start: new Date(Date.now() + 3_600_000) })
    assert.deepEqual(later, [])
  } finally {
    await sbx.kill()
  }
})

test('getMetrics of an unknown sandbox is SandboxNotFoundError', async () => {
  await assert.rejects(Sandbox.getMetrics('zzzzzzzzzzzzzzzzzzzz', opts), (e) => e.name === 'SandboxNotFoundError')
})

test('metrics of many sandboxes and logs answer in E2B\'s shapes over plain HTTP', async () => {
  const a = await Sandbox.create('base', opts)
  const b = await Sandbox.create('base', opts)
  try {
    const many = await api(`/sandboxes/metrics?sandbox_ids=${a.sandboxId},${b.sandboxId}`)
    assert.equal(many.status, 200)
    assert.deepEqual(Object.keys(many.body.sandboxes).sort(), [a.sandboxId, b.sandboxId].sort())
    assert.equal(many.body.sandboxes[a.sandboxId].cpuCount, 2)
    assert.equal(typeof many.body.sandboxes[a.sandboxId].timestampUnix, 'number')

    const v2 = await api(`/v2/sandboxes/${a.sandboxId}/logs?limit=10&direction=backward`)
    assert.equal(v2.status, 200)
    assert.deepEqual(v2.body, { logs: [] })
    const v1 = await api(`/sandboxes/${a.sandboxId}/logs`)
    assert.equal(v1.status, 200)
    assert.deepEqual(v1.body, { logs: [], logEntries: [] })

    await Sandbox.pause(b.sandboxId, opts)
    const paused = await api(`/v2/sandboxes/${b.sandboxId}/logs`) // the journal kept at pause
    assert.equal(paused.status, 200)
    assert.deepEqual(paused.body, { logs: [] })
  } finally {
    await a.kill()
    await Sandbox.kill(b.sandboxId, opts)
  }
})

test('Prometheus shows sandbox state gauges and lifecycle operation latency', async () => {
  const sbx = await Sandbox.create('base', opts)
  try {
    const res = await fetch(`${server.url}/metrics`)
    assert.equal(res.status, 200)
    const text = await res.text()
    assert.match(text, /^aenv_sandboxes_running \d+$/m)
    assert.match(text, /^aenv_sandboxes_paused \d+$/m)
    assert.match(text, /^aenv_sandboxes_transitioning 0$/m)
    assert.match(text, /^aenv_operation_duration_seconds_count\{operation="create",outcome="ok"\} \d+$/m)
  } finally {
    await sbx.kill()
  }
})
