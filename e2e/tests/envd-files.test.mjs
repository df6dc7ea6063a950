// filesystem.Filesystem and /files end to end: the unmodified npm `e2b` SDK in debug mode against the envd jar on
// localhost:49983, with an access token set (so every call carries X-Access-Token and download/upload URLs are signed).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, symlinkSync, statSync, chmodSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { Sandbox, FileType, FilesystemEventType, NotFoundError, SandboxError, TimeoutError } from 'e2b'
import { Sandbox as SandboxV250 } from 'e2b-v250'
import { startEnvd, ensureTestUser, waitFor } from '../lib/envd-harness.mjs'

const TOKEN = 'e2e-files-token'
let envd
let sbx
let user
let work

// Relative paths resolve against the requesting user's home (as E2B's envd does): the suite's own user has a fresh
// directory as its home, so that they land there and nowhere else.
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0
const suiteTest = asRoot ? test : test.skip // as another user's home: root only

before(async () => {
  if (!asRoot) return
  work = mkdtempSync(join(tmpdir(), 'envd-files-e2e-'))
  chmodSync(work, 0o777)
  user = ensureTestUser('envd-files-e2e', { home: work })
  envd = await startEnvd({ init: { accessToken: TOKEN, defaultWorkdir: work, defaultUser: user } })
  // Debug mode (localhost:49983, no API); the token makes the SDK send X-Access-Token and sign URLs, as for a
  // sandbox created with `secure: true`.
  sbx = new Sandbox({ sandboxId: 'debug_sandbox_id', envdVersion: '99.99.99', envdAccessToken: TOKEN, debug: true })
})

after(async () => {
  await envd?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

suiteTest('text written with the SDK reads back, relative to the user\'s home', async () => {
  const info = await sbx.files.write('hello.txt', 'hello world')
  assert.deepEqual(info, { name: 'hello.txt', path: join(work, 'hello.txt'), type: 'file', metadata: undefined })
  assert.equal(await sbx.files.read('hello.txt'), 'hello world')
  assert.equal(readFileSync(join(work, 'hello.txt'), 'utf8'), 'hello world')
})

suiteTest('binary content survives the round trip byte for byte, and empty files read as empty', async () => {
  const bytes = Uint8Array.from({ length: 256 }, (_, i) => i)
  await sbx.files.write('bin/all-bytes.dat', bytes.buffer)
  assert.deepEqual(await sbx.files.read('bin/all-bytes.dat', { format: 'bytes' }), bytes)
  await sbx.files.write('empty.txt', '')
  assert.equal(await sbx.files.read('empty.txt'), '')
})

suiteTest('several files go up in one request, each to its own full path', async () => {
  const results = await sbx.files.write([
    { path: 'multi/a.txt', data: 'A' },
    { path: join(work, 'multi', 'b.txt'), data: 'B' },
  ])
  assert.deepEqual(results.map((r) => r.path), [join(work, 'multi', 'a.txt'), join(work, 'multi', 'b.txt')])
  assert.equal(await sbx.files.read('multi/b.txt'), 'B')
})

suiteTest('files and parents created for the user are owned by the user', { skip: !user && 'needs root' }, async () => {
  await sbx.files.write('owned/deep/file.txt', 'x')
  const uid = Number(readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${user}:`)).split(':')[2])
  for (const p of ['owned', 'owned/deep', 'owned/deep/file.txt']) {
    assert.equal(statSync(join(work, p)).uid, uid, p)
  }
})

suiteTest('a write as another user goes to that user and a streamed body is uploaded as octet-stream', async () => {
  const asRoot = await sbx.files.write(join(work, 'by-root.txt'), 'r', { user: 'root' })
  assert.equal(statSync(asRoot.path).uid, 0)
  const stream = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('streamed '))
      controller.enqueue(new TextEncoder().encode('body'))
      controller.close()
    },
  })
  await sbx.files.write('streamed.txt', stream)
  assert.equal(await sbx.files.read('streamed.txt'), 'streamed body')
})

suiteTest('reading a missing file is FileNotFoundError and reading a directory an error', async () => {
  await assert.rejects(sbx.files.read('nope.txt'), NotFoundError)
  await sbx.files.makeDir('a-dir')
  await assert.rejects(sbx.files.read('a-dir'), SandboxError)
})

suiteTest('list returns children, and deeper levels with depth', async () => {
  await sbx.files.makeDir('tree/a/b')
  await sbx.files.write('tree/top.txt', 't')
  await sbx.files.write('tree/a/b/leaf.txt', 'l')
  const shallow = await sbx.files.list('tree')
  assert.deepEqual(shallow.map((e) => e.name), ['a', 'top.txt'])
  assert.equal(shallow[0].type, FileType.DIR)
  const deep = await sbx.files.list('tree', { depth: 3 })
  assert.deepEqual(deep.map((e) => e.path), [
    join(work, 'tree/a'), join(work, 'tree/a/b'), join(work, 'tree/a/b/leaf.txt'), join(work, 'tree/top.txt'),
  ])
  await assert.rejects(sbx.files.list('tree/top.txt'), SandboxError)
  await assert.rejects(sbx.files.list('no-such-dir'), NotFoundError)
})

suiteTest('exists tells files that are there from files that are not', async () => {
  await sbx.files.write('present.txt', 'x')
  assert.equal(await sbx.files.exists('present.txt'), true)
  assert.equal(await sbx.files.exists('absent.txt'), false)
})

suiteTest('getInfo reports mode bits, an ls-style string, owner, size, time and symlink targets', async () => {
  await sbx.files.write('info.txt', '12345')
  chmodSync(join(work, 'info.txt'), 0o644)
  const info = await sbx.files.getInfo('info.txt')
  assert.equal(info.name, 'info.txt')
  assert.equal(info.type, FileType.FILE)
  assert.equal(info.path, join(work, 'info.txt'))
  assert.equal(info.size, 5)
  assert.equal(info.mode, 0o644)
  assert.equal(info.permissions, '-rw-r--r--')
  assert.equal(info.owner, user ?? 'root')
  assert.ok(info.modifiedTime instanceof Date && Math.abs(info.modifiedTime - Date.now()) < 60_000)
  assert.equal(info.symlinkTarget, undefined)

  const dir = await sbx.files.getInfo(work)
  assert.equal(dir.type, FileType.DIR)
  assert.match(dir.permissions, /^drwx/)

  symlinkSync(join(work, 'info.txt'), join(work, 'link-to-info'))
  const link = await sbx.files.getInfo('link-to-info')
  assert.equal(link.symlinkTarget, join(work, 'info.txt'))
  assert.match(link.permissions, /^L/)
  await assert.rejects(sbx.files.getInfo('missing'), NotFoundError)
})

suiteTest('makeDir creates parents and answers false when the directory exists', async () => {
  assert.equal(await sbx.files.makeDir('made/x/y'), true)
  assert.ok(statSync(join(work, 'made/x/y')).isDirectory())
  assert.equal(await sbx.files.makeDir('made/x/y'), false)
})

suiteTest('rename moves an entry and returns where it went', async () => {
  await sbx.files.write('before.txt', 'moving')
  const moved = await sbx.files.rename('before.txt', 'after/renamed.txt')
  assert.equal(moved.path, join(work, 'after/renamed.txt'))
  assert.equal(moved.name, 'renamed.txt')
  assert.equal(await sbx.files.exists('before.txt'), false)
  assert.equal(await sbx.files.read('after/renamed.txt'), 'moving')
  await assert.rejects(sbx.files.rename('never-was.txt', 'x.txt'), NotFoundError)
})

suiteTest('remove deletes files and whole directories', async () => {
  await sbx.files.write('doomed/inner/f.txt', 'x')
  await sbx.files.remove('doomed')
  assert.equal(await sbx.files.exists('doomed'), false)
})

suiteTest('write metadata comes back from getInfo, list and rename, and an overwrite clears it', async () => {
  const written = await sbx.files.write('meta/m.txt', 'x', { metadata: { author: 'ada' } })
  assert.deepEqual(written.metadata, { author: 'ada' })
  assert.deepEqual((await sbx.files.getInfo('meta/m.txt')).metadata, { author: 'ada' })
  assert.deepEqual((await sbx.files.list('meta')).find((e) => e.name === 'm.txt').metadata, { author: 'ada' })
  assert.deepEqual((await sbx.files.rename('meta/m.txt', 'meta/n.txt')).metadata, { author: 'ada' })

  const octet = await sbx.files.write('meta/o.txt', 'x', { metadata: { purpose: 'octet' }, useOctetStream: true })
  assert.deepEqual(octet.metadata, { purpose: 'octet' })
  const both = await sbx.files.write([{ path: 'meta/p1.txt', data: '1' }, { path: 'meta/p2.txt', data: '2' }],
    { metadata: { source: 'suite' } })
  assert.deepEqual(both.map((f) => f.metadata), [{ source: 'suite' }, { source: 'suite' }])

  const overwritten = await sbx.files.write('meta/n.txt', 'second')
  assert.equal(overwritten.metadata, undefined)
  assert.equal((await sbx.files.getInfo('meta/n.txt')).metadata, undefined)
})

suiteTest('watchDir reports creates, writes, renames and removes with names relative to the directory', async () => {
  await sbx.files.makeDir('watched')
  const events = []
  const handle = await sbx.files.watchDir('watched', (e) => events.push(e))
  const seen = (type, name) => events.some((e) => e.type === type && e.name === name)
  try {
    await sbx.files.write('watched/w.txt', 'one')
    await waitFor(() => seen(FilesystemEventType.CREATE, 'w.txt'), { what: 'CREATE w.txt' })
    await sbx.files.write('watched/w.txt', 'two, longer')
    await waitFor(() => seen(FilesystemEventType.WRITE, 'w.txt'), { what: 'WRITE w.txt' })
    await sbx.files.rename('watched/w.txt', 'watched/v.txt')
    await waitFor(() => seen(FilesystemEventType.RENAME, 'w.txt') && seen(FilesystemEventType.CREATE, 'v.txt'),
      { what: 'RENAME w.txt + CREATE v.txt' })
    chmodSync(join(work, 'watched/v.txt'), 0o600)
    await waitFor(() => seen(FilesystemEventType.CHMOD, 'v.txt'), { what: 'CHMOD v.txt' })
    await sbx.files.remove('watched/v.txt')
    await waitFor(() => seen(FilesystemEventType.REMOVE, 'v.txt'), { what: 'REMOVE v.txt' })
  } finally {
    await handle.stop()
  }
})

suiteTest('a recursive watch sees new subdirectories and names nested files by their relative path', async () => {
  await sbx.files.makeDir('rwatch')
  const events = []
  const handle = await sbx.files.watchDir('rwatch', (e) => events.push(e), { recursive: true, includeEntry: true })
  try {
    await sbx.files.makeDir('rwatch/nested')
    await waitFor(() => events.some((e) => e.type === FilesystemEventType.CREATE && e.name === 'nested'), { what: 'CREATE nested' })
    await sbx.files.write('rwatch/nested/f.txt', 'x')
    const created = await waitFor(() => events.find((e) => e.name === 'nested/f.txt'), { what: 'event for nested/f.txt' })
    assert.equal(created.entry?.path, join(work, 'rwatch/nested/f.txt'))
  } finally {
    await handle.stop()
  }
})

suiteTest('a watch ends with a timeout error when its timeoutMs runs out', async () => {
  await sbx.files.makeDir('short-watch')
  let exitError
  const exited = new Promise((resolve) => {
    sbx.files.watchDir('short-watch', () => {}, { timeoutMs: 500, onExit: (err) => { exitError = err; resolve() } })
  })
  await exited
  assert.ok(exitError instanceof TimeoutError, `expected TimeoutError, got ${exitError}`)
})

suiteTest('watching a missing directory is FileNotFoundError and watching a file an error', async () => {
  await assert.rejects(sbx.files.watchDir('no-such-dir', () => {}), NotFoundError)
  await sbx.files.write('plain.txt', 'x')
  await assert.rejects(sbx.files.watchDir('plain.txt', () => {}), SandboxError)
})

suiteTest('signed download and upload URLs work without the token until they expire', async () => {
  await sbx.files.write('signed.txt', 'signed content')
  const download = await sbx.downloadUrl('signed.txt', { useSignatureExpiration: 10_000 })
  assert.match(download, /signature=v1_/)
  const got = await fetch(download)
  assert.equal(got.status, 200)
  assert.equal(await got.text(), 'signed content')

  const upload = await sbx.uploadUrl('uploaded.txt', { useSignatureExpiration: 10_000 })
  const form = new FormData()
  form.append('file', 'file content')
  const put = await fetch(upload, { method: 'POST', body: form })
  assert.equal(put.status, 200)
  assert.deepEqual(await put.json(), [{ name: 'uploaded.txt', path: join(work, 'uploaded.txt'), type: 'file' }])
  assert.equal(await sbx.files.read('uploaded.txt'), 'file content')

  const expired = await fetch(await sbx.downloadUrl('signed.txt', { useSignatureExpiration: -10_000 }))
  assert.equal(expired.status, 401)
  assert.deepEqual(await expired.json(), { code: 401, message: 'signature is already expired' })

  const tampered = await fetch(download.replace('signed.txt', 'hello.txt'))
  assert.equal(tampered.status, 401)
  const unsigned = await fetch(`${envd.url}/files?path=signed.txt`)
  assert.equal(unsigned.status, 401)
})

suiteTest('gzip: reads can be gzip-encoded on the wire and uploads can be gzip-compressed', async () => {
  const text = 'squeeze me '.repeat(1000)
  await sbx.files.write('gz.txt', text, { gzip: true })
  assert.equal(readFileSync(join(work, 'gz.txt'), 'utf8'), text)
  assert.equal(await sbx.files.read('gz.txt', { gzip: true }), text)

  const raw = await fetch(`${envd.url}/files?path=gz.txt`, { headers: { 'X-Access-Token': TOKEN, 'Accept-Encoding': 'gzip' } })
  assert.equal(raw.headers.get('content-encoding'), 'gzip')
  const body = Buffer.from(await raw.arrayBuffer())
  // fetch inflates transparently; the bytes match the file whichever way they were decoded
  assert.equal((body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body) : body).toString(), text)
})

suiteTest('the previous SDK release (2.50.0) reads, writes, lists and signs against the same envd', async () => {
  const old = new SandboxV250({ sandboxId: 'debug_sandbox_id', envdVersion: '99.99.99', envdAccessToken: TOKEN, debug: true })
  await old.files.write('v250/a.txt', 'from 2.50')
  assert.equal(await old.files.read('v250/a.txt'), 'from 2.50')
  assert.deepEqual((await old.files.list('v250')).map((e) => e.name), ['a.txt'])
  assert.equal((await old.files.getInfo('v250/a.txt')).size, 9)
  const res = await fetch(await old.downloadUrl('v250/a.txt', { useSignatureExpiration: 60 }))
  assert.equal(await res.text(), 'from 2.50')
})

suiteTest('GET /metrics reports CPU, memory and disk', async () => {
  const res = await fetch(`${envd.url}/metrics`, { headers: { 'X-Access-Token': TOKEN } })
  assert.equal(res.status, 200)
  const m = await res.json()
  for (const key of ['ts', 'cpu_count', 'cpu_used_pct', 'mem_total', 'mem_used', 'mem_cache', 'mem_total_mib',
    'mem_used_mib', 'disk_used', 'disk_total']) {
    assert.equal(typeof m[key], 'number', key)
  }
  assert.ok(m.cpu_count >= 1 && m.mem_total > 0 && m.disk_total > 0)
  assert.equal((await fetch(`${envd.url}/metrics`)).status, 401)
})

suiteTest('files created outside envd are served as they are on disk', async () => {
  writeFileSync(join(work, 'from-node.txt'), 'made outside envd')
  assert.equal(await sbx.files.read('from-node.txt'), 'made outside envd')
})
