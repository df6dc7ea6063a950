// Template routes with the unmodified npm `e2b` SDK (2.51.0) against the server jar with the mock backend:
// Template.exists (GET /templates/aliases/{alias}) for the built-in template and a named snapshot, the lists and one
// template over plain HTTP, Template.build's calls, and the file upload of COPY steps (GET
// /templates/{id}/files/{hash}, then a PUT of the tar archive to the signed URL it answers) as the SDK makes it and by
// hand (the mock backend runs no commands: the steps' effects are tested on the container backend,
// sdk-container-templates).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Sandbox, Template } from 'e2b'
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

async function getJson(path) {
  const res = await fetch(server.url + path, { headers: { 'X-API-Key': server.apiKey } })
  return { status: res.status, next: res.headers.get('x-next-token'), body: await res.json() }
}

test('Template.exists finds the built-in template and a named snapshot, not an unknown', async () => {
  assert.equal(await Template.exists('base', opts), true)
  assert.equal(await Template.exists('no-such-template', opts), false)

  const sbx = await Sandbox.create('base', opts)
  try {
    const snapshot = await sbx.createSnapshot({ name: 'tpl-e2e' })
    assert.equal(await Template.exists('tpl-e2e', opts), true)
    const one = await getJson('/templates/tpl-e2e')
    assert.equal(one.status, 200)
    assert.equal(one.body.templateID, snapshot.snapshotId)
    assert.deepEqual(one.body.builds.map((b) => b.buildID), [snapshot.snapshotId])
  } finally {
    await sbx.kill()
  }
})

test('the v1 and v2 lists hold base with its resources; v2 pages with X-Next-Token', async () => {
  const v1 = await getJson('/templates')
  assert.equal(v1.status, 200)
  const base = v1.body.find((t) => t.templateID === 'base')
  assert.ok(base, JSON.stringify(v1.body))
  assert.equal(base.buildID, 'base')
  assert.equal(base.public, true)
  assert.ok(base.cpuCount >= 1 && base.memoryMB > 0 && base.diskSizeMB > 0, JSON.stringify(base))

  const v2 = await getJson('/v2/templates?limit=1')
  assert.equal(v2.status, 200)
  assert.equal(v2.body.length, 1)
  assert.equal(v2.next, null) // base is the mock backend's only template
  assert.equal((await getJson('/v2/templates?nextToken=garbage')).status, 400)
})

test('Template.build of the base image logs its steps; the template creates sandboxes', async () => {
  const logs = []
  const built = await Template.build(
    Template().fromBaseImage().setEnvs({ MODE: 'e2e' }).runCmd('true'),
    'tpl-build-e2e:v1',
    { ...opts, onBuildLogs: (entry) => logs.push(entry.message) })
  assert.equal(built.name, 'tpl-build-e2e:v1')
  assert.ok(logs.some((m) => m.includes('RUN true')), logs.join('\n'))
  assert.equal(await Template.exists('tpl-build-e2e', opts), true)
  const sbx = await Sandbox.create('tpl-build-e2e', opts)
  await sbx.kill()
})

test('Template.build from a registry image fails with the server\'s reason', async () => {
  await assert.rejects(Template.build(Template().fromImage('ubuntu:24.04'), 'tpl-image-e2e', opts),
    (e) => /images from registries are not supported/.test(e.message))
})

test('Template.build uploads a COPY step's files once; a rebuild finds them cached', async () => {
  const context = mkdtempSync(join(tmpdir(), 'aenv-copy-e2e-'))
  try {
    writeFileSync(join(context, 'hello.txt'), 'hello\n')
    mkdirSync(join(context, 'app'))
    writeFileSync(join(context, 'app', 'main.py'), 'print(1)\n')
    const template = () => Template({ fileContextPath: context })
      .fromBaseImage()
      .copy('hello.txt', '/srv/hello.txt', { mode: 0o600 })
      .copyItems([{ src: 'app', dest: '/srv/app', user: 'root' }])
    const logs = []
    await Template.build(template(), 'tpl-copy-e2e', { ...opts, onBuildLogs: (entry) => logs.push(entry.message) })
    assert.ok(logs.includes("Uploaded 'hello.txt'"), logs.join('\n'))
    assert.ok(logs.includes("Uploaded 'app'"), logs.join('\n'))
    assert.ok(logs.some((m) => m.includes('COPY hello.txt /srv/hello.txt')), logs.join('\n'))
    assert.ok(logs.some((m) => m.includes('COPY app /srv/app (as root)')), logs.join('\n'))

    const again = []
    await Template.build(template(), 'tpl-copy-e2e', { ...opts, onBuildLogs: (entry) => again.push(entry.message) })
    assert.ok(again.includes("Skipping upload of 'hello.txt', already cached"), again.join('\n'))
    assert.equal(await Template.exists('tpl-copy-e2e', opts), true)
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
})

test('the upload link is a signed URL on this server: one PUT without the API key', async () => {
  const requested = await fetch(server.url + '/v3/templates', {
    method: 'POST',
    headers: { 'X-API-Key': server.apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'tpl-upload-e2e' }),
  })
  assert.equal(requested.status, 202)
  const { templateID } = await requested.json()
  const hash = 'c0ffee'.repeat(10) + 'c0ff'
  const link = await getJson(`/templates/${templateID}/files/${hash}`)
  assert.equal(link.status, 201)
  assert.equal(link.body.present, false)
  assert.ok(link.body.url.startsWith(`${server.url}/templates/${templateID}/files/${hash}?`), link.body.url)

  // a tar archive of one empty file, as `tar` writes it: a 512-byte header, then the end blocks
  const header = Buffer.alloc(512)
  header.write('empty.txt', 0)
  header.write('0000644\0', 100)
  header.write('0000000\0', 108)
  header.write('0000000\0', 116)
  header.write('00000000000\0', 124)
  header.write('00000000000\0', 136)
  header.write('        ', 148)
  header.write('0', 156)
  header.write('ustar\0' + '00', 257)
  let sum = 0
  for (const byte of header) sum += byte
  header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148)
  const archive = Buffer.concat([header, Buffer.alloc(1024)])

  const put = await fetch(link.body.url, { method: 'PUT', body: archive })
  assert.equal(put.status, 204, await put.text())
  const reused = await fetch(link.body.url, { method: 'PUT', body: archive })
  assert.equal(reused.status, 403)
  assert.equal((await getJson(`/templates/${templateID}/files/${hash}`)).body.present, true)
})
