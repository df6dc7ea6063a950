// Volumes with the unmodified npm `e2b` SDK against the server jar with the mock backend (no sandbox is involved):
// Volume.create/list/getInfo/connect/destroy with the API key, and the volume's files (writeFile, readFile, list,
// makeDir, getInfo, exists, updateMetadata, remove) through the content routes with the volume's token, which the
// SDK sends to E2B_VOLUME_API_URL (set to the server's API URL). Also over plain HTTP: the size limit the operator
// sets (AENV_VOLUME_MAX_MB), ranged reads, the move route, a wrong token, `..` in a path, a symlink planted on the host
// that points out of the volume, and a file larger than the volume (507). As root the volumes are loop-mounted ext4
// images (the size is enforced by the file system); otherwise plain directories, and the size test is skipped.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { Volume, VolumeNotFoundError, VolumePathNotFoundError, VolumeError, AuthenticationError } from 'e2b'
import { startServer } from '../lib/control-plane-harness.mjs'

const isRoot = process.getuid?.() === 0
const ENV = {
  AENV_VOLUME_DEFAULT_MB: '16',
  AENV_VOLUME_MAX_MB: '64',
  AENV_VOLUME_STORAGE: isRoot ? 'loop' : 'directory',
}
let server
let opts

async function start(dataDir) {
  server = await startServer({ backend: 'mock', env: ENV, dataDir })
  process.env.E2B_VOLUME_API_URL = server.url // where the SDK sends volume content requests
  opts = { apiUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 30_000 }
}

before(async () => {
  delete process.env.E2B_DEBUG // any value turns on the SDK's debug mode
  await start()
})

after(async () => {
  if (!server) return
  // loop mounts live under the data dir: unmount them (destroy) before the harness removes it
  const res = await fetch(server.url + '/volumes', { headers: { 'X-API-Key': server.apiKey } })
  for (const v of res.ok ? await res.json() : []) {
    await fetch(`${server.url}/volumes/${v.volumeID}`, { method: 'DELETE', headers: { 'X-API-Key': server.apiKey } })
  }
  await server.stop()
})

function content(volume, route, query, init = {}) {
  const params = new URLSearchParams(query)
  return fetch(`${server.url}/volumecontent/${volume.volumeId}/${route}?${params}`, {
    ...init,
    headers: { Authorization: `Bearer ${volume.token}`, ...(init.headers ?? {}) },
  })
}

test('create, list, getInfo, connect and destroy a volume with the SDK', async () => {
  const volume = await Volume.create('e2e-life', opts)
  assert.match(volume.volumeId, /^[a-z0-9]{20}$/)
  assert.equal(volume.name, 'e2e-life')
  assert.match(volume.token, /^[0-9a-f]{64}$/)

  const listed = await Volume.list(opts)
  assert.ok(listed.some((v) => v.volumeId === volume.volumeId && v.name === 'e2e-life'), JSON.stringify(listed))

  const info = await Volume.getInfo(volume.volumeId, opts)
  assert.deepEqual(info, { volumeId: volume.volumeId, name: 'e2e-life', token: volume.token, domain: undefined })

  const connected = await Volume.connect(volume.volumeId, opts)
  assert.equal(connected.token, volume.token)
  await connected.writeFile('/hello.txt', 'hi')
  assert.equal(await volume.readFile('/hello.txt'), 'hi')

  assert.equal(await Volume.destroy(volume.volumeId, opts), true)
  assert.equal(await Volume.destroy(volume.volumeId, opts), false)
  await assert.rejects(Volume.getInfo(volume.volumeId, opts), VolumeNotFoundError)
  await assert.rejects(Volume.connect(volume.volumeId, opts), VolumeNotFoundError)
  assert.ok(!(await Volume.list(opts)).some((v) => v.volumeId === volume.volumeId))
  if (isRoot) assert.equal(existsSync(join(server.dataDir, 'volumes', volume.volumeId)), false)
})

test('names are checked and unique', async () => {
  await assert.rejects(Volume.create('Not Valid!', opts), (e) => e instanceof VolumeError && /name/.test(e.message))
  const volume = await Volume.create('e2e-unique', opts)
  try {
    await assert.rejects(Volume.create('e2e-unique', opts), (e) => e instanceof VolumeError && /exists/.test(e.message))
  } finally {
    await Volume.destroy(volume.volumeId, opts)
  }
})

test('the operator sets the default and the maximum size', async () => {
  const post = (body) => fetch(server.url + '/volumes', {
    method: 'POST',
    headers: { 'X-API-Key': server.apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  })
  const tooBig = await post({ name: 'e2e-too-big', sizeMiB: 65 })
  assert.equal(tooBig.status, 400)
  assert.match((await tooBig.json()).message, /64 MiB/)

  const made = await post({ name: 'e2e-sized', sizeMiB: 32 })
  assert.equal(made.status, 201)
  const body = await made.json()
  assert.equal(body.sizeMiB, 32)
  const defaulted = await Volume.create('e2e-default-size', opts)
  const info = await (await fetch(`${server.url}/volumes/${defaulted.volumeId}`, { headers: { 'X-API-Key': server.apiKey } })).json()
  assert.equal(info.sizeMiB, 16)
  await Volume.destroy(body.volumeID, opts)
  await Volume.destroy(defaulted.volumeId, opts)

  const noKey = await fetch(server.url + '/volumes')
  assert.equal(noKey.status, 401)
})

test('SDK file methods: write, read, list, makeDir, getInfo, updateMetadata, remove', async () => {
  const volume = await Volume.create('e2e-files', opts)
  try {
    const written = await volume.writeFile('/docs/readme.md', '# volume\n')
    assert.equal(written.type, 'file')
    assert.equal(written.path, '/docs/readme.md')
    assert.equal(written.size, 9)
    assert.ok(written.mtime instanceof Date && !Number.isNaN(written.mtime.getTime()))
    if (isRoot) assert.deepEqual([written.uid, written.gid], [1000, 1000]) // the sandboxes' default user

    assert.equal(await volume.readFile('/docs/readme.md'), '# volume\n')
    const bytes = await volume.readFile('/docs/readme.md', { format: 'bytes' })
    assert.deepEqual(Buffer.from(bytes).toString(), '# volume\n')
    await volume.writeFile('/docs/readme.md', 'replaced') // overwrite
    assert.equal(await volume.readFile('/docs/readme.md'), 'replaced')
    const binary = new Uint8Array([0, 1, 2, 255, 254])
    await volume.writeFile('/bin.dat', binary.buffer)
    assert.deepEqual(new Uint8Array(await volume.readFile('/bin.dat', { format: 'bytes' })), binary)

    const dir = await volume.makeDir('/a/b/c', { force: true })
    assert.equal(dir.type, 'directory')
    await assert.rejects(volume.makeDir('/x/y'), VolumePathNotFoundError) // parent missing without force
    await assert.rejects(volume.makeDir('/a'), (e) => e instanceof VolumeError && /exists/.test(e.message))

    const top = await volume.list('/')
    assert.deepEqual(top.map((e) => [e.name, e.type]), [['a', 'directory'], ['bin.dat', 'file'], ['docs', 'directory']])
    const deep = await volume.list('/a', { depth: 3 })
    assert.deepEqual(deep.map((e) => e.path), ['/a/b', '/a/b/c'])

    const stat = await volume.getInfo('/docs/readme.md')
    assert.equal(stat.size, 8)
    assert.equal(stat.mode, 0o644)
    assert.equal(await volume.exists('/docs/readme.md'), true)
    assert.equal(await volume.exists('/docs/nope.md'), false)
    await assert.rejects(volume.getInfo('/docs/nope.md'), VolumePathNotFoundError)
    await assert.rejects(volume.readFile('/nope'), VolumePathNotFoundError)

    const updated = await volume.updateMetadata('/docs/readme.md', { mode: 0o600 })
    assert.equal(updated.mode, 0o600)

    await volume.remove('/a')
    await volume.remove('/bin.dat')
    await assert.rejects(volume.remove('/bin.dat'), VolumePathNotFoundError)
    assert.deepEqual((await volume.list('/')).map((e) => e.name), ['docs'])

    // the per-call apiUrl option works as the environment variable does
    const other = new Volume(volume.volumeId, volume.name, volume.token)
    assert.equal(await other.readFile('/docs/readme.md', { apiUrl: server.url }), 'replaced')
  } finally {
    await Volume.destroy(volume.volumeId, opts)
  }
})

test('ranged reads and moves over plain HTTP', async () => {
  const volume = await Volume.create('e2e-ranges', opts)
  try {
    await volume.writeFile('/digits', '0123456789')
    const part = await content(volume, 'file', { path: '/digits' }, { headers: { Range: 'bytes=2-5' } })
    assert.equal(part.status, 206)
    assert.equal(part.headers.get('content-range'), 'bytes 2-5/10')
    assert.equal(await part.text(), '2345')
    const tail = await content(volume, 'file', { path: '/digits' }, { headers: { Range: 'bytes=-3' } })
    assert.equal(await tail.text(), '789')
    const past = await content(volume, 'file', { path: '/digits' }, { headers: { Range: 'bytes=20-' } })
    assert.equal(past.status, 416)

    const moved = await content(volume, 'move', { path: '/digits', to: '/renamed' }, { method: 'POST' })
    assert.equal(moved.status, 200)
    assert.equal((await moved.json()).path, '/renamed')
    assert.equal(await volume.exists('/digits'), false)
    await volume.writeFile('/other', 'x')
    const clash = await content(volume, 'move', { path: '/other', to: '/renamed' }, { method: 'POST' })
    assert.equal(clash.status, 409)
    const forced = await content(volume, 'move', { path: '/other', to: '/renamed', force: 'true' }, { method: 'POST' })
    assert.equal(forced.status, 200)
    assert.equal(await volume.readFile('/renamed'), 'x')
  } finally {
    await Volume.destroy(volume.volumeId, opts)
  }
})

test('a wrong or missing token is refused, another volume\'s token too', async () => {
  const volume = await Volume.create('e2e-token', opts)
  const second = await Volume.create('e2e-token-2', opts)
  try {
    const forged = new Volume(volume.volumeId, volume.name, 'f'.repeat(64))
    await assert.rejects(forged.list('/'), AuthenticationError)
    const crossed = new Volume(volume.volumeId, volume.name, second.token)
    await assert.rejects(crossed.readFile('/x'), AuthenticationError)
    const bare = await fetch(`${server.url}/volumecontent/${volume.volumeId}/dir?path=/`)
    assert.equal(bare.status, 401)
    // the API key is not a volume token
    const withKey = await fetch(`${server.url}/volumecontent/${volume.volumeId}/dir?path=/`, {
      headers: { 'X-API-Key': server.apiKey, Authorization: `Bearer ${server.apiKey}` },
    })
    assert.equal(withKey.status, 401)
  } finally {
    await Volume.destroy(volume.volumeId, opts)
    await Volume.destroy(second.volumeId, opts)
  }
})

test('unknown volume is not found', async () => {
  await assert.rejects(Volume.getInfo('a'.repeat(20), opts), VolumeNotFoundError)
  assert.equal(await Volume.destroy('nosuchvolume', opts), false)
})

test('paths cannot leave the volume: .. and symlinks are refused', async () => {
  const volume = await Volume.create('e2e-escape', opts)
  try {
    await assert.rejects(volume.readFile('/../../../etc/passwd'), (e) => e instanceof VolumeError && /\.\./.test(e.message))
    await assert.rejects(volume.writeFile('a/../../x', 'x'), (e) => e instanceof VolumeError && /\.\./.test(e.message))
    await assert.rejects(volume.list('..'), VolumeError)
    const raw = await content(volume, 'file', { path: '/../agentenv.db' })
    assert.equal(raw.status, 400)

    // a link that points out of the volume, as a sandbox could make once it mounts the volume
    const root = join(server.dataDir, 'volumes', volume.volumeId, 'content')
    symlinkSync('/etc', join(root, 'etc-link'))
    symlinkSync('/etc/hostname', join(root, 'hostname-link'))
    await assert.rejects(volume.readFile('/etc-link/hostname'), (e) => e instanceof VolumeError && /symbolic link/.test(e.message))
    await assert.rejects(volume.writeFile('/etc-link/aenv-pwned', 'x'), (e) => e instanceof VolumeError && /symbolic link/.test(e.message))
    await assert.rejects(volume.list('/etc-link'), VolumeError)
    await assert.rejects(volume.readFile('/hostname-link'), (e) => e instanceof VolumeError && /regular file/.test(e.message))
    const link = await volume.getInfo('/hostname-link')
    assert.equal(link.type, 'symlink')
    assert.equal(link.target, '/etc/hostname')
    assert.equal(existsSync('/etc/aenv-pwned'), false)
    await volume.remove('/etc-link') // removes the link, not /etc
    assert.equal(existsSync('/etc/hostname'), true)
  } finally {
    await Volume.destroy(volume.volumeId, opts)
  }
})

test('a file larger than the volume is refused with 507 and the volume stays usable', { skip: !isRoot && 'volumes are plain directories without root' }, async () => {
  const volume = await Volume.create('e2e-full', opts) // 16 MiB (AENV_VOLUME_DEFAULT_MB)
  try {
    await volume.writeFile('/keep', 'kept')
    const big = new Uint8Array(20 << 20).fill(120)
    await assert.rejects(volume.writeFile('/big', big.buffer), (e) => e instanceof VolumeError && /larger than the volume|full/.test(e.message))
    const res = await content(volume, 'file', { path: '/big' }, { method: 'PUT', body: big, headers: { 'Content-Type': 'application/octet-stream' } })
    assert.equal(res.status, 507)

    // no declared length: the file system's limit (ENOSPC) stops the write, and the partial file is gone
    const stream = new ReadableStream({
      pull(controller) {
        if (this.sent === undefined) this.sent = 0
        if (this.sent >= 20) { controller.close(); return }
        this.sent++
        controller.enqueue(new Uint8Array(1 << 20).fill(121))
      },
    })
    await assert.rejects(volume.writeFile('/streamed', stream), (e) => e instanceof VolumeError && /full/.test(e.message))
    assert.deepEqual((await volume.list('/')).map((e) => e.name), ['keep'])
    assert.equal(await volume.readFile('/keep'), 'kept')
    await volume.writeFile('/after', 'still writable')
    assert.equal(await volume.readFile('/after'), 'still writable')
  } finally {
    await Volume.destroy(volume.volumeId, opts)
  }
})

test('volumes, their tokens and their files survive a server restart', async () => {
  const volume = await Volume.create('e2e-restart', opts)
  await volume.writeFile('/kept.txt', 'kept across a restart')
  const dataDir = server.dataDir
  await server.stop({ keepDataDir: true })
  server = undefined
  await start(dataDir)
  const again = await Volume.connect(volume.volumeId, opts)
  assert.equal(again.name, 'e2e-restart')
  assert.equal(again.token, volume.token)
  assert.equal(await again.readFile('/kept.txt'), 'kept across a restart')
  await again.writeFile('/after-restart.txt', 'written')
  assert.deepEqual((await again.list('/')).map((e) => e.name), ['after-restart.txt', 'kept.txt'])
  assert.equal(await Volume.destroy(volume.volumeId, opts), true)
})
