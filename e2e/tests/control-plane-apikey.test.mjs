// Without AENV_API_KEY the server generates a key file under its data dir on first start, logs the file's path
// (never the key) and accepts exactly that key.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Sandbox } from 'e2b'
import { startServer } from '../lib/control-plane-harness.mjs'

test('a generated API key file is used, logged by path and never printed', async () => {
  delete process.env.E2B_DEBUG
  const server = await startServer({ backend: 'mock', env: { AENV_API_KEY: '' } })
  try {
    const file = join(server.dataDir, 'secrets', 'api-key')
    const key = readFileSync(file, 'utf8').trim()
    assert.match(key, /^e2b_[0-9a-f]{40}$/)
    assert.equal(statSync(file).mode & 0o777, 0o600)
    assert.ok(server.output().includes(file), 'the log names the key file')
    assert.ok(!server.output().includes(key), 'the log never contains the key')

    const opts = { apiUrl: server.url, requestTimeoutMs: 30_000 }
    const sbx = await Sandbox.create('base', { ...opts, apiKey: key })
    assert.equal(await Sandbox.kill(sbx.sandboxId, { ...opts, apiKey: key }), true)
    await assert.rejects(Sandbox.create('base', { ...opts, apiKey: server.apiKey }),
      (e) => e.name === 'AuthenticationError' || /401/.test(e.message))
  } finally {
    await server.stop()
  }
})
