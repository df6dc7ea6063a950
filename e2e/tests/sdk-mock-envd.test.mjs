// The unmodified npm `e2b` SDK end to end through the server's sandbox proxy, before real sandboxes exist: the server
// jar runs the mock backend, whose every running sandbox reports one local envd process (started here, on a free
// port and a unix socket) as its guest endpoint. E2B_API_URL and E2B_SANDBOX_URL are both the server, E2B_DEBUG is
// unset, so every envd call goes through the proxy with the E2b-Sandbox-Id/E2b-Sandbox-Port headers and the
// sandbox's X-Access-Token, and uploadUrl/downloadUrl are fetched without any header (routed by their signature).
// Caveat of the mock: sandbox-level envVars reach the mock's fake guest agent, not this envd, and processes and files
// live in the one shared envd (pause/resume keeps them trivially); sdk-container.test.mjs covers real sandboxes.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest, createServer } from 'node:http'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Sandbox, CommandExitError } from 'e2b'
import { startServer, freePort } from '../lib/control-plane-harness.mjs'
import { startEnvd, waitFor, ensureTestUser } from '../lib/envd-harness.mjs'

const DOMAIN = 'sandbox.test'

let envd
let server
let opts
let workDir

before(async () => {
  delete process.env.E2B_DEBUG // any value turns on the SDK's debug mode
  // As root, envd's processes run as a fresh test account (its login shell reads only /etc/skel's profile, not the
  // host root's dotfiles); otherwise as the current user.
  const user = ensureTestUser()
  envd = await startEnvd({ port: await freePort(), args: user ? ['--default-user', user] : [] })
  server = await startServer({
    backend: 'mock',
    env: {
      AENV_BACKEND_GUEST_ENDPOINT: `127.0.0.1:${envd.port}`,
      AENV_BACKEND_GUEST_UNIX_SOCKET: envd.socketPath,
      AENV_SANDBOX_DOMAIN: DOMAIN,
    },
  })
  opts = { apiUrl: server.url, sandboxUrl: server.url, apiKey: server.apiKey, requestTimeoutMs: 30_000 }
  workDir = mkdtempSync(join(tmpdir(), 'sdk-mock-envd-'))
  chmodSync(workDir, 0o777) // envd's default user writes here
})

after(async () => {
  try {
    if (server) await server.stop()
  } finally {
    if (envd) await envd.stop()
    if (workDir) rmSync(workDir, { recursive: true, force: true })
  }
})

async function withSandbox(fn, createOpts = {}) {
  const sbx = await Sandbox.create('base', { ...opts, ...createOpts })
  try {
    return await fn(sbx)
  } finally {
    await sbx.kill()
  }
}

/** A raw HTTP/1.1 request (node:http lets the test set Host, which fetch does not). */
function rawRequest(path, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}${path}`, { method, headers }, (res) => {
      let data = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { data += d })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }))
    })
    req.on('error', reject)
    if (body !== undefined) req.write(body)
    req.end()
  })
}

test('create with envs and metadata; getInfo and isRunning go through the proxy', async () => {
  await withSandbox(async (sbx) => {
    assert.equal(await sbx.isRunning(), true)
    const info = await sbx.getInfo()
    assert.equal(info.sandboxId, sbx.sandboxId)
    assert.deepEqual(info.metadata, { suite: 'sdk-mock-envd' })
    const listed = await Sandbox.list({ ...opts, query: { metadata: { suite: 'sdk-mock-envd' } } }).nextItems()
    assert.ok(listed.some((s) => s.sandboxId === sbx.sandboxId))
  }, { envs: { SANDBOX_LEVEL: 'yes' }, metadata: { suite: 'sdk-mock-envd' } })
})

test('getInfo, list with metadata filter and pagination, setTimeout', async () => {
  const tag = `list-${Date.now()}`
  const a = await Sandbox.create('base', { ...opts, metadata: { tag } })
  const b = await Sandbox.create('base', { ...opts, metadata: { tag } })
  try {
    const paginator = Sandbox.list({ ...opts, limit: 1, query: { metadata: { tag } } })
    const pages = []
    while (paginator.hasNext) pages.push(await paginator.nextItems())
    assert.deepEqual(pages.map((p) => p.length), [1, 1])
    assert.deepEqual(pages.flat().map((s) => s.sandboxId).sort(), [a.sandboxId, b.sandboxId].sort())

    await a.setTimeout(45_000)
    const info = await a.getInfo()
    const left = info.endAt.getTime() - Date.now()
    assert.ok(left > 30_000 && left <= 45_000, `TTL now ${left} ms`)
  } finally {
    await a.kill()
    await b.kill()
  }
})

test('commands: envs, non-zero exit, background, connect, list, stdin and kill', async () => {
  await withSandbox(async (sbx) => {
    const hi = await sbx.commands.run('echo "hi $GREETING"', { envs: { GREETING: 'proxy' } })
    assert.equal(hi.exitCode, 0)
    assert.equal(hi.stdout, 'hi proxy\n')

    await assert.rejects(sbx.commands.run('echo oops >&2; exit 3'), (e) => {
      assert.ok(e instanceof CommandExitError)
      assert.equal(e.exitCode, 3)
      assert.equal(e.stderr, 'oops\n')
      return true
    })

    const cat = await sbx.commands.run('cat', { background: true, stdin: true })
    await sbx.commands.sendStdin(cat.pid, 'through the proxy\n')
    await sbx.commands.closeStdin(cat.pid)
    const catResult = await cat.wait()
    assert.equal(catResult.stdout, 'through the proxy\n')

    const sleeper = await sbx.commands.run('sleep 300', { background: true })
    const listed = await sbx.commands.list()
    assert.ok(listed.some((p) => p.pid === sleeper.pid), 'the background process is listed')
    const attached = await sbx.commands.connect(sleeper.pid)
    assert.equal(await sbx.commands.kill(sleeper.pid), true)
    await assert.rejects(attached.wait(), (e) => e instanceof CommandExitError)
    assert.equal(await sbx.commands.kill(sleeper.pid), false)
  })
})

test('pty: create, send input, see the output, kill', async () => {
  await withSandbox(async (sbx) => {
    let output = ''
    const decoder = new TextDecoder()
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { output += decoder.decode(d) } })
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('echo pty-$((40+2))\n'))
    await waitFor(() => output.includes('pty-42'), { what: 'pty output' })
    assert.equal(await sbx.pty.kill(pty.pid), true)
    await pty.wait().catch(() => {})
  })
})

test('files: write, read, list, exists, makeDir, rename, remove and watch', async () => {
  await withSandbox(async (sbx) => {
    const dir = join(workDir, 'files')
    assert.equal(await sbx.files.makeDir(dir), true)
    const events = []
    const watcher = await sbx.files.watchDir(dir, (e) => events.push(e))
    try {
      const info = await sbx.files.write(`${dir}/a.txt`, 'hello proxy')
      assert.equal(info.name, 'a.txt')
      assert.equal(await sbx.files.read(`${dir}/a.txt`), 'hello proxy')
      const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251)
      await sbx.files.write(`${dir}/big.bin`, big.buffer)
      const back = await sbx.files.read(`${dir}/big.bin`, { format: 'bytes' })
      assert.equal(back.length, big.length)
      assert.deepEqual(Buffer.from(back).equals(Buffer.from(big)), true)
      const names = (await sbx.files.list(dir)).map((e) => e.name).sort()
      assert.deepEqual(names, ['a.txt', 'big.bin'])
      assert.equal(await sbx.files.exists(`${dir}/nope`), false)
      await sbx.files.rename(`${dir}/a.txt`, `${dir}/b.txt`)
      await sbx.files.remove(`${dir}/b.txt`)
      assert.equal(await sbx.files.exists(`${dir}/b.txt`), false)
      await waitFor(() => events.some((e) => e.name === 'a.txt'), { what: 'a watch event for a.txt' })
    } finally {
      await watcher.stop()
    }
  })
})

test('uploadUrl and downloadUrl work without sandbox headers (routed by signature)', async () => {
  await withSandbox(async (sbx) => {
    const path = join(workDir, `signed-${sbx.sandboxId}.txt`)
    const upload = await sbx.uploadUrl(path)
    const form = new FormData()
    form.append('file', new Blob(['signed content']), path)
    const up = await fetch(upload, { method: 'POST', body: form })
    assert.equal(up.status, 200, await up.clone().text())
    const download = await sbx.downloadUrl(path)
    const down = await fetch(download)
    assert.equal(down.status, 200)
    assert.equal(await down.text(), 'signed content')

    const tampered = download.replace(/signature=v1_[^&]+/, 'signature=v1_AAAA')
    const refused = await fetch(tampered)
    assert.equal(refused.status, 401)

    const expired = await sbx.downloadUrl(path, { useSignatureExpiration: -10 })
    const late = await fetch(expired)
    assert.equal(late.status, 401)
    assert.deepEqual(await late.json(), { code: 401, message: 'signature is already expired' })
  })
})

test('envd calls need the sandbox\'s X-Access-Token; /health does not', async () => {
  await withSandbox(async (sbx) => {
    const route = { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983' }
    assert.equal((await rawRequest('/health', { headers: route })).status, 204)
    const noToken = await rawRequest('/files?path=/etc/hostname', { headers: route })
    assert.equal(noToken.status, 401)
    const wrong = await rawRequest('/files?path=/etc/hostname', { headers: { ...route, 'X-Access-Token': 'nope' } })
    assert.equal(wrong.status, 401)
  })
})

test('a user HTTP server is reached by host and /proxy routing; unknown ids are 502', async () => {
  const seen = []
  const app = createServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers })
    res.setHeader('content-type', 'text/plain')
    res.end(`app saw ${req.method} ${req.url}`)
  })
  const port = await freePort()
  await new Promise((resolve) => app.listen(port, '127.0.0.1', resolve))
  try {
    await withSandbox(async (sbx) => {
      const host = sbx.getHost(port)
      assert.equal(host, `${port}-${sbx.sandboxId}.${DOMAIN}`)
      const byHost = await rawRequest('/hello?x=1', { headers: { Host: host, 'X-API-Key': server.apiKey } })
      assert.equal(byHost.status, 200)
      assert.equal(byHost.body, 'app saw GET /hello?x=1')
      const forwarded = seen.at(-1).headers
      assert.equal(forwarded['x-forwarded-host'], host)
      assert.equal(forwarded['x-forwarded-proto'], 'http')
      assert.equal(forwarded['x-api-key'], undefined, 'the platform key never reaches the sandbox')

      const byPath = await rawRequest(`/proxy/${sbx.sandboxId}/${port}/p/q`)
      assert.equal(byPath.body, 'app saw GET /p/q')
    })
    const gone = await rawRequest('/hello', { headers: { Host: `${port}-zzzzzzzzzzzzzzzzzzzz.${DOMAIN}` } })
    assert.equal(gone.status, 502)
    assert.deepEqual(JSON.parse(gone.body),
      { code: 502, message: 'The sandbox was not found', sandboxId: 'zzzzzzzzzzzzzzzzzzzz' })
  } finally {
    await new Promise((resolve) => app.close(resolve))
  }
})

test('a kill mid-stream gives the SDK\'s "killed" error; then isRunning is false', async () => {
  const sbx = await Sandbox.create('base', opts)
  let killed = false
  try {
    const running = sbx.commands.run('echo started; sleep 120', { background: true })
    const handle = await running
    await sbx.kill()
    killed = true
    await assert.rejects(handle.wait(), (e) => {
      assert.match(e.message, /killed or reached its end of life/)
      return true
    })
    assert.equal(await sbx.isRunning(), false)
    await assert.rejects(sbx.commands.run('echo too late'), (e) => e.name === 'TimeoutError' || e.name === 'SandboxNotFoundError')
  } finally {
    if (!killed) await sbx.kill()
  }
})

test('pause: isRunning false, a streaming command is cut; connect brings it back', async () => {
  await withSandbox(async (sbx) => {
    const handle = await sbx.commands.run('sleep 120', { background: true })
    await sbx.pause()
    await assert.rejects(handle.wait())
    assert.equal(await sbx.isRunning(), false)
    await sbx.connect()
    assert.equal(await sbx.isRunning(), true)
    assert.equal((await sbx.commands.run('echo back')).stdout, 'back\n')
    await sbx.commands.kill(handle.pid)
  })
})

test('a paused sandbox with autoResume is resumed by its first proxied request', async () => {
  await withSandbox(async (sbx) => {
    await sbx.pause()
    assert.equal((await sbx.getInfo()).state, 'paused')
    const r = await sbx.commands.run('echo resumed on traffic')
    assert.equal(r.stdout, 'resumed on traffic\n')
    const info = await sbx.getInfo()
    assert.equal(info.state, 'running')
    assert.ok(info.endAt.getTime() - Date.now() > 250_000, `TTL at least 300 s, ends ${info.endAt.toISOString()}`)
  }, { timeoutMs: 60_000, lifecycle: { onTimeout: 'pause', autoResume: true } })
})
