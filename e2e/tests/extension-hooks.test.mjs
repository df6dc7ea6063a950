// Custom-extension lifecycle hooks end to end: the server jar (mock backend) configured with the example extension
// from docs/examples/custom-extension.mjs, driven by the unmodified `e2b` SDK and plain HTTP for the
// AgentENV-specific custom-extension-params routes.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { Sandbox } from 'e2b'
import { startServer } from '../lib/control-plane-harness.mjs'
import { createExtension } from '../../docs/examples/custom-extension.mjs'

let server
let extension
let opts

before(async () => {
  delete process.env.E2B_DEBUG
  extension = createExtension()
  extension.server.listen(0, '127.0.0.1')
  await once(extension.server, 'listening')
  const { port } = extension.server.address()
  server = await startServer({
    backend: 'mock',
    env: { AENV_CUSTOM_EXTENSION_URL: `http://127.0.0.1:${port}`, AENV_CUSTOM_EXTENSION_TIMEOUT_MS: '2000' },
  })
  opts = { apiUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 30_000 }
})

after(async () => {
  if (server) await server.stop()
  if (extension) {
    extension.server.closeAllConnections()
    extension.server.close()
  }
})

async function api(method, path, body) {
  const response = await fetch(server.url + path, {
    method,
    headers: { 'X-API-Key': server.apiKey, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

const hooksOf = (sandboxId) => extension.state.events.filter((e) => e.body.sandboxId === sandboxId).map((e) => e.hook)

test('a refused start-fresh is a 400 naming hook, status and reason; nothing is left', async () => {
  const refused = await api('POST', '/v2/sandboxes', { templateID: 'base', customExtensionParams: { vpn: { region: 'mars' } } })
  assert.equal(refused.status, 400)
  assert.equal(refused.body.code, 400)
  assert.match(refused.body.message, /start-fresh rejected the request: HTTP 422: .*vpn\.region must be one of eu, us/)
  const listed = await api('GET', '/v2/sandboxes')
  assert.deepEqual(listed.body, [])
})

test('params go through create, patch, pause, connect; every started instance stops', async () => {
  const created = await api('POST', '/v2/sandboxes', { templateID: 'base', customExtensionParams: { vpn: { region: 'eu' } } })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const id = created.body.sandboxID
  const fresh = extension.state.events.find((e) => e.hook === 'start-fresh' && e.body.sandboxId === id)
  assert.match(fresh.body.sandboxInstanceId, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.match(fresh.body.networkNamespacePath, /^\/var\/run\/netns\//)
  assert.ok(fresh.body.hostInteractionIp)

  const patched = await api('PATCH', `/sandboxes/${id}/custom-extension-params`, { vpn: { region: 'us' } })
  assert.equal(patched.status, 200)
  assert.deepEqual(patched.body, { vpn: { region: 'us' } })
  const badPatch = await api('PATCH', `/sandboxes/${id}/custom-extension-params`, { firewall: true })
  assert.equal(badPatch.status, 400)
  assert.match(badPatch.body.message, /patch-params .*HTTP 422.*unknown param 'firewall'/)
  assert.deepEqual((await api('GET', `/sandboxes/${id}/custom-extension-params`)).body, { vpn: { region: 'us' } })

  assert.equal(await Sandbox.pause(id, opts), true)
  const paused = await api('PATCH', `/sandboxes/${id}/custom-extension-params`, { vpn: null })
  assert.equal(paused.status, 409)
  await Sandbox.connect(id, { ...opts, timeoutMs: 60_000 })
  const resume = extension.state.events.filter((e) => e.hook === 'start-resume' && e.body.sandboxId === id).at(-1)
  assert.deepEqual(resume.body.customExtensionParams, { vpn: { region: 'us' } })
  assert.notEqual(resume.body.sandboxInstanceId, fresh.body.sandboxInstanceId)

  assert.equal(await Sandbox.kill(id, opts), true)
  assert.deepEqual(hooksOf(id), ['start-fresh', 'patch-params', 'patch-params', 'stop', 'start-resume', 'stop'])
  const stops = extension.state.events.filter((e) => e.hook === 'stop' && e.body.sandboxId === id)
  assert.deepEqual(stops.map((e) => e.body.sandboxInstanceId), [fresh.body.sandboxInstanceId, resume.body.sandboxInstanceId])
})

test('an extension in maintenance makes the SDK create fail with a 502 naming the hook', async () => {
  extension.state.maintenance = true
  try {
    await assert.rejects(Sandbox.create('base', opts), (e) => /start-fresh failed: HTTP 503/.test(e.message) && /502/.test(e.message))
  } finally {
    extension.state.maintenance = false
  }
  const sbx = await Sandbox.create('base', opts)
  assert.equal(await Sandbox.kill(sbx.sandboxId, opts), true)
})
