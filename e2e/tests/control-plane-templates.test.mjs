// Template routes with the unmodified npm `e2b` SDK (2.51.0) against the server jar with the mock backend:
// Template.exists (GET /templates/aliases/{alias}) for the built-in template and a named snapshot, the lists and one
// template over plain HTTP, Template.build's calls, and the file upload of COPY steps (GET
// /templates/{id}/files/{hash}, then a PUT of the tar archive to the signed URL it answers) as the SDK makes it and by
// hand (the mock backend runs no commands: the steps' effects are tested on the container backend,
// sdk-container-templates); built templates as objects: their listing, tags, Template.exists/aliasExists and delete
// (409 while a sandbox of the template runs).
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

test('Template.build from an unreachable registry fails naming the image', async () => {
  await assert.rejects(Template.build(Template().fromImage('127.0.0.1:1/nothing:1'), 'tpl-image-e2e', opts),
    (e) => /fromImage 127\.0\.0\.1:1\/nothing:1: /.test(e.message))
  assert.equal(await Template.exists('tpl-image-e2e', opts), false)
})

test('Template.build uploads COPY files once; a rebuild finds them cached', async () => {
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

test('a built template is listed by id and name with its build; exists, aliasExists', async () => {
  const built = await Template.build(Template().fromBaseImage().runCmd('true'), 'tpl-list-e2e', opts)
  const v1 = await getJson('/templates')
  const listed = v1.body.find((t) => t.templateID === built.templateId)
  assert.ok(listed, JSON.stringify(v1.body))
  assert.deepEqual(listed.names, ['tpl-list-e2e'])
  assert.equal(listed.buildID, built.buildId)
  assert.equal(listed.buildStatus, 'ready')
  const v2 = await getJson('/v2/templates')
  assert.ok(v2.body.some((t) => t.templateID === built.templateId && t.names.includes('tpl-list-e2e')))
  const alias = await getJson('/templates/aliases/tpl-list-e2e')
  assert.equal(alias.body.templateID, built.templateId)
  const one = await getJson('/templates/tpl-list-e2e')
  assert.deepEqual(one.body.builds.map((b) => b.buildID), [built.buildId])
  assert.equal(await Template.exists('tpl-list-e2e', opts), true)
  assert.equal(await Template.aliasExists('tpl-list-e2e', opts), true)
  assert.equal(await Template.aliasExists('tpl-list-e2e-missing', opts), false)
})

test('tags of builds: assigned, listed, moved and removed; name:tag creates', async () => {
  const first = await Template.build(Template().fromBaseImage().setEnvs({ V: '1' }), 'tpl-tags-e2e:v1', opts)
  const second = await Template.build(Template().fromBaseImage().setEnvs({ V: '2' }), 'tpl-tags-e2e', opts)
  assert.equal(second.templateId, first.templateId)

  const assigned = await Template.assignTags('tpl-tags-e2e:v1', ['stable', 'prod'], opts)
  assert.equal(assigned.buildId, first.buildId)
  assert.deepEqual([...assigned.tags].sort(), ['prod', 'stable'])
  let tags = await Template.getTags(first.templateId, opts)
  assert.deepEqual(tags.map((t) => [t.tag, t.buildId]),
    [['default', second.buildId], ['prod', first.buildId], ['stable', first.buildId], ['v1', first.buildId]])
  assert.ok(tags.every((t) => t.createdAt instanceof Date && !Number.isNaN(t.createdAt.getTime())))

  const tagged = await Sandbox.create('tpl-tags-e2e:stable', opts)
  await tagged.kill()

  await Template.assignTags('tpl-tags-e2e', 'v1', opts) // moves v1 to the latest build
  await Template.removeTags('tpl-tags-e2e', ['stable', 'prod'], opts)
  tags = await Template.getTags('tpl-tags-e2e', opts)
  assert.deepEqual(tags.map((t) => [t.tag, t.buildId]), [['default', second.buildId], ['v1', second.buildId]])
  await assert.rejects(Sandbox.create('tpl-tags-e2e:stable', opts), /no tag or build stable/)
  await assert.rejects(Template.removeTags('tpl-tags-e2e', 'default', opts), /default/)
})

test('delete is 409 while a sandbox of it runs; then it deletes and frees the name', async () => {
  const built = await Template.build(Template().fromBaseImage(), 'tpl-delete-e2e', opts)
  const sbx = await Sandbox.create('tpl-delete-e2e', opts)
  const del = () => fetch(server.url + '/templates/tpl-delete-e2e',
    { method: 'DELETE', headers: { 'X-API-Key': server.apiKey } })
  try {
    const refused = await del()
    assert.equal(refused.status, 409)
    assert.match((await refused.json()).message, new RegExp(`${sbx.sandboxId}.*kill them first`))
  } finally {
    await sbx.kill()
  }
  assert.equal((await del()).status, 204)
  assert.equal(await Template.exists('tpl-delete-e2e', opts), false)
  assert.equal((await getJson('/templates')).body.some((t) => t.templateID === built.templateId), false)
  assert.equal((await del()).status, 404)
  const again = await Template.build(Template().fromBaseImage(), 'tpl-delete-e2e', opts)
  assert.notEqual(again.templateId, built.templateId)
})
