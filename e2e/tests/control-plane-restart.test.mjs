// Durability through the whole stack: SIGTERM pauses running sandboxes, and a server restarted on the same data dir
// lists them as paused and resumes them on connect (e2b SDK 2.51.0, mock backend, same API key).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox } from 'e2b'
import { startServer } from '../lib/control-plane-harness.mjs'

test('a graceful stop pauses running sandboxes and a restarted server resumes them', async () => {
  delete process.env.E2B_DEBUG
  let server = await startServer({ backend: 'mock' })
  try {
    const opts = () => ({ apiUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 30_000 })
    const running = await Sandbox.create('base', { ...opts(), metadata: { role: 'survivor' } })
    const paused = await Sandbox.create('base', opts())
    assert.equal(await Sandbox.pause(paused.sandboxId, opts()), true)

    const { dataDir } = server
    await server.stop({ keepDataDir: true })
    server = await startServer({ backend: 'mock', dataDir })

    const listed = await Sandbox.list({ ...opts(), query: { state: ['paused'] } }).nextItems()
    assert.deepEqual(new Set(listed.map((s) => s.sandboxId)), new Set([running.sandboxId, paused.sandboxId]))
    const info = await Sandbox.getInfo(running.sandboxId, opts())
    assert.equal(info.state, 'paused')
    assert.deepEqual(info.metadata, { role: 'survivor' })

    const resumed = await Sandbox.connect(running.sandboxId, { ...opts(), timeoutMs: 60_000 })
    assert.equal(resumed.sandboxId, running.sandboxId)
    assert.equal((await Sandbox.getInfo(running.sandboxId, opts())).state, 'running')
    assert.equal(await Sandbox.kill(running.sandboxId, opts()), true)
    assert.equal(await Sandbox.kill(paused.sandboxId, opts()), true)
  } finally {
    await server.stop()
  }
})
