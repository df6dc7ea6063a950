// Control-plane smoke test: the unmodified npm `e2b` SDK (2.51.0, v2 routes; and 2.50.0, v1 routes) against the
// server jar with the mock backend. The mock runs no envd, so only control-plane calls are exercised.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox } from 'e2b'
import { Sandbox as SandboxV250 } from 'e2b-v250'
import { startServer } from '../lib/control-plane-harness.mjs'

let server
let opts

before(async () => {
  delete process.env.E2B_DEBUG // any value turns on the SDK's debug mode
  server = await startServer({ backend: 'mock' })
  opts = { apiUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 30_000 }
})

after(async () => {
  if (server) await server.stop()
})

test('the SDK creates, inspects, lists, times out, pauses, connects, kills (v2)', async () => {
  const tag = `smoke ${Date.now()} & more=yes`
  const sbx = await Sandbox.create('base', { ...opts, metadata: { purpose: tag, kind: 'smoke' }, timeoutMs: 120_000 })
  assert.match(sbx.sandboxId, /^[a-z0-9]{20}$/)

  const info = await Sandbox.getInfo(sbx.sandboxId, opts)
  assert.equal(info.sandboxId, sbx.sandboxId)
  assert.equal(info.templateId, 'base')
  assert.equal(info.state, 'running')
  assert.deepEqual(info.metadata, { purpose: tag, kind: 'smoke' })
  const ttl = info.endAt.getTime() - info.startedAt.getTime()
  assert.ok(ttl > 110_000 && ttl <= 121_000, `TTL ${ttl} ms`)

  const other = await Sandbox.create('base', { ...opts, metadata: { kind: 'other' } })
  const listed = await Sandbox.list({ ...opts, query: { metadata: { purpose: tag } } }).nextItems()
  assert.deepEqual(listed.map((s) => s.sandboxId), [sbx.sandboxId])
  const running = await Sandbox.list({ ...opts, query: { state: ['running'] } }).nextItems()
  assert.deepEqual(new Set(running.map((s) => s.sandboxId)), new Set([sbx.sandboxId, other.sandboxId]))

  await sbx.setTimeout(30_000)
  const shortened = await Sandbox.getInfo(sbx.sandboxId, opts)
  assert.ok(shortened.endAt.getTime() - Date.now() <= 31_000, 'setTimeout may shorten the TTL')

  assert.equal(await Sandbox.pause(sbx.sandboxId, opts), true)
  assert.equal(await Sandbox.pause(sbx.sandboxId, opts), false)
  assert.equal((await Sandbox.getInfo(sbx.sandboxId, opts)).state, 'paused')
  const paused = await Sandbox.list({ ...opts, query: { state: ['paused'] } }).nextItems()
  assert.deepEqual(paused.map((s) => s.sandboxId), [sbx.sandboxId])

  const connected = await Sandbox.connect(sbx.sandboxId, { ...opts, timeoutMs: 60_000 })
  assert.equal(connected.sandboxId, sbx.sandboxId)
  assert.equal((await Sandbox.getInfo(sbx.sandboxId, opts)).state, 'running')

  assert.equal(await Sandbox.kill(sbx.sandboxId, opts), true)
  assert.equal(await Sandbox.kill(sbx.sandboxId, opts), false)
  await assert.rejects(Sandbox.getInfo(sbx.sandboxId, opts), (e) => e.name === 'SandboxNotFoundError' || /404|not found/i.test(e.message))
  assert.equal(await Sandbox.kill(other.sandboxId, opts), true)
})

test('paginating two sandboxes with limit 1 gives exactly two pages', async () => {
  const kind = `page-${Date.now()}`
  const a = await Sandbox.create('base', { ...opts, metadata: { kind } })
  const b = await Sandbox.create('base', { ...opts, metadata: { kind } })
  const paginator = Sandbox.list({ ...opts, limit: 1, query: { metadata: { kind } } })
  const first = await paginator.nextItems()
  assert.equal(paginator.hasNext, true)
  const second = await paginator.nextItems()
  assert.equal(paginator.hasNext, false)
  assert.deepEqual([...first, ...second].map((s) => s.sandboxId), [b.sandboxId, a.sandboxId])
  await Sandbox.kill(a.sandboxId, opts)
  await Sandbox.kill(b.sandboxId, opts)
})

test('the 2.50 SDK drives the v1 routes: create, connect, pause, kill', async () => {
  const sbx = await SandboxV250.create('base', { ...opts, timeoutMs: 60_000 })
  assert.match(sbx.sandboxId, /^[a-z0-9]{20}$/)
  assert.equal((await SandboxV250.getInfo(sbx.sandboxId, opts)).state, 'running')
  assert.equal(await SandboxV250.betaPause(sbx.sandboxId, opts), true)
  const resumed = await SandboxV250.connect(sbx.sandboxId, { ...opts, timeoutMs: 60_000 })
  assert.equal(resumed.sandboxId, sbx.sandboxId)
  assert.equal((await SandboxV250.getInfo(sbx.sandboxId, opts)).state, 'running')
  assert.equal(await SandboxV250.kill(sbx.sandboxId, opts), true)
  assert.equal(await SandboxV250.kill(sbx.sandboxId, opts), false)
})

test('a wrong API key is rejected with an authentication error', async () => {
  await assert.rejects(Sandbox.create('base', { ...opts, apiKey: 'e2b_' + 'f'.repeat(40) }),
    (e) => e.name === 'AuthenticationError' || /401|unauthori/i.test(e.message))
})
