// The unmodified npm `e2b` SDK (latest 2.x, and e2b-v250 for the v1 routes) against the server jar with the real
// container backend, through the sandbox proxy: E2B_API_URL = E2B_SANDBOX_URL = the server, E2B_DEBUG unset.
// Needs root and a host prepared by scripts/setup-host.sh (the base template, runc, CRIU); skipped otherwise (failed
// when AENV_REQUIRE_HOST_TESTS=1). The server runs with its own names (netns/veth prefix, runc state dir, cgroup
// parent, container id prefix, network slots), so it does not touch a server or test run next to it.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { readFileSync } from 'node:fs'
import { Sandbox, CommandExitError } from 'e2b'
import { Sandbox as SandboxV250 } from 'e2b-v250'
import { WebSocket } from 'undici'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'
import { waitFor } from '../lib/envd-harness.mjs'

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvk',
  runDir: '/run/agentenv/e2e-sdk',
  cgroupParent: 'agentenv-e2e-sdk',
  firstSlot: 12288,
  idPrefix: 'sdk-',
}

let server
let opts

before(async () => {
  // no AENV_SANDBOX_DOMAIN: sandboxes are reported under localhost:<port>, and the proxy routes the hosts getHost builds
  if (!unready) ({ server, opts } = await startSuiteServer(LANE, {
    AENV_BACKEND_MAX_SANDBOXES: '16',
    AENV_BACKEND_MEMORY_MB: '512',
  }))
})

after(async () => {
  if (server) await stopSuiteServer(server, LANE)
})

async function withSandbox(fn, createOpts = {}) {
  const sbx = await Sandbox.create('base', { ...opts, ...createOpts })
  try {
    return await fn(sbx)
  } finally {
    await sbx.kill().catch(() => {})
  }
}

function rawRequest(path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}${path}`, { headers }, (res) => {
      let data = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { data += d })
      res.on('end', () => resolve({ status: res.statusCode, body: data }))
    })
    req.on('error', reject)
    req.end()
  })
}

hostTest('create with envs, metadata, timeout; commands, stdin, files in a real sandbox', async () => {
  await withSandbox(async (sbx) => {
    assert.equal(await sbx.isRunning(), true)
    const info = await sbx.getInfo()
    assert.deepEqual(info.metadata, { suite: 'sdk-container' })
    assert.ok(info.endAt.getTime() - Date.now() > 100_000 && info.endAt.getTime() - Date.now() <= 120_000)

    const env = await sbx.commands.run('echo "$FROM_CREATE $(whoami) $HOME"')
    assert.equal(env.stdout, 'from-create user /home/user\n')
    await assert.rejects(sbx.commands.run('exit 7'), (e) => e instanceof CommandExitError && e.exitCode === 7)

    const cat = await sbx.commands.run('cat', { background: true, stdin: true })
    await sbx.commands.sendStdin(cat.pid, 'stdin through the proxy\n')
    await sbx.commands.closeStdin(cat.pid)
    assert.equal((await cat.wait()).stdout, 'stdin through the proxy\n')

    await sbx.files.write('notes/a.txt', 'hello sandbox')
    assert.equal(await sbx.files.read('/home/user/notes/a.txt'), 'hello sandbox')
    assert.deepEqual((await sbx.files.list('notes')).map((e) => e.name), ['a.txt'])
    const download = await fetch(await sbx.downloadUrl('notes/a.txt'))
    assert.equal(await download.text(), 'hello sandbox')
  }, { envs: { FROM_CREATE: 'from-create' }, metadata: { suite: 'sdk-container' }, timeoutMs: 120_000 })
})

hostTest('base has E2B\'s tools for the user: python, pip, node, npm, a C toolchain, sudo', async () => {
  await withSandbox(async (sbx) => {
    const tools = await sbx.commands.run('python --version && pip --version && node --version && npm --version'
      + ' && curl --version && wget --version && git --version && unzip -v && gcc --version && make --version'
      + ' && ps --version && ip -V && sudo -n true')
    assert.match(tools.stdout, /^Python 3\./m)
    assert.match(tools.stdout, /^pip \d+/m)
    assert.match(tools.stdout, /^v\d+\./m)
    assert.match(tools.stdout, /^gcc /m)

    await sbx.files.write('hello.c', '#include <stdio.h>\nint main(void) { printf("built %d\\n", 6 * 7); return 0; }\n')
    const built = await sbx.commands.run('make -s hello && ./hello')
    assert.equal(built.stdout, 'built 42\n')
    assert.equal((await sbx.commands.run('python -c "import sys; print(sys.version_info[0])"')).stdout, '3\n')
    assert.equal((await sbx.commands.run('node -e "console.log(6 * 7)"')).stdout, '42\n')
  })
})

async function logLines(sandboxId, query = '') {
  const res = await fetch(`${server.url}/v2/sandboxes/${sandboxId}/logs${query}`, { headers: { 'X-API-Key': server.apiKey } })
  assert.equal(res.status, 200, `logs answer 200 (got ${res.status})`)
  return (await res.json()).logs.map((e) => e.message)
}

hostTest('pause: not running, logs readable; connect: background process and files intact', async () => {
  await withSandbox(async (sbx) => {
    await sbx.files.write('/home/user/kept.txt', 'kept across pause')
    const bootId = await bootIdOf(sbx)
    await sbx.commands.run('echo before-pause-probe')
    const sleeper = await sbx.commands.run('sleep 600', { background: true })
    assert.equal(await sbx.pause(), true)
    assert.equal(await sbx.isRunning(), false)
    assert.ok((await logLines(sbx.sandboxId, '?search=before-pause-probe')).length > 0, 'a paused sandbox serves its logs')
    const v1 = await fetch(`${server.url}/sandboxes/${sbx.sandboxId}/logs?start=0`, { headers: { 'X-API-Key': server.apiKey } })
    assert.equal(v1.status, 200)
    assert.ok((await v1.json()).logs.some((l) => l.line.includes('before-pause-probe')), 'v1 logs of a paused sandbox')
    await sbx.connect()
    assert.equal(await sbx.isRunning(), true)
    await sbx.commands.run('echo after-resume-probe')
    const live = await logLines(sbx.sandboxId)
    assert.ok(live.some((m) => m.includes('before-pause-probe')) && live.some((m) => m.includes('after-resume-probe')),
      'a resumed sandbox serves live logs, the ones from before the pause included')
    assert.ok((await sbx.commands.list()).some((p) => p.pid === sleeper.pid), 'the process survived the pause')
    assert.equal(await sbx.files.read('/home/user/kept.txt'), 'kept across pause')
    assert.equal(await bootIdOf(sbx), bootId, 'a resume with memory is the same boot')
    assert.equal(await sbx.commands.kill(sleeper.pid), true)
  })
})

const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function bootIdOf(sbx) {
  return (await sbx.commands.run('cat /proc/sys/kernel/random/boot_id')).stdout.trim()
}

hostTest('own boot_id; a filesystem-only pause and connect is a new boot (files kept)', async () => {
  const hostBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  await withSandbox(async (sbx) => {
    const other = await Sandbox.create('base', opts)
    try {
      const bootId = await bootIdOf(sbx)
      assert.match(bootId, BOOT_ID)
      assert.notEqual(bootId, hostBootId)
      assert.notEqual(await bootIdOf(other), bootId)
    } finally {
      await other.kill()
    }
    const bootId = await bootIdOf(sbx)
    await sbx.files.write('/home/user/kept.txt', 'kept across a reboot')
    const sleeper = await sbx.commands.run('sleep 600', { background: true })
    assert.equal(await sbx.pause({ keepMemory: false }), true)
    await sbx.connect()
    assert.equal(await sbx.files.read('/home/user/kept.txt'), 'kept across a reboot')
    assert.ok(!(await sbx.commands.list()).some((p) => p.pid === sleeper.pid), 'no process survives a filesystem-only pause')
    const rebooted = await bootIdOf(sbx)
    assert.match(rebooted, BOOT_ID)
    assert.notEqual(rebooted, bootId)
    assert.notEqual(rebooted, hostBootId)
  })
})

hostTest('fork: the child has the parent\'s files and diverges from it', async () => {
  await withSandbox(async (sbx) => {
    await sbx.files.write('/home/user/origin.txt', 'parent')
    const [child] = await sbx.fork({ count: 1 })
    assert.ok(!(child instanceof Error), String(child))
    try {
      assert.notEqual(child.sandboxId, sbx.sandboxId)
      assert.equal(await child.files.read('/home/user/origin.txt'), 'parent')
      assert.equal(await bootIdOf(child), await bootIdOf(sbx), 'a fork child continues its parent\'s boot')
      await child.files.write('/home/user/origin.txt', 'child')
      assert.equal(await sbx.files.read('/home/user/origin.txt'), 'parent')
    } finally {
      await child.kill()
    }
  })
})

hostTest('snapshot, then create a new sandbox from it', async () => {
  await withSandbox(async (sbx) => {
    await sbx.files.write('/home/user/snap.txt', 'in the snapshot')
    const snapshot = await sbx.createSnapshot()
    const fromSnapshot = await Sandbox.create(snapshot.snapshotId, opts)
    try {
      assert.equal(await fromSnapshot.files.read('/home/user/snap.txt'), 'in the snapshot')
    } finally {
      await fromSnapshot.kill()
      await Sandbox.deleteSnapshot(snapshot.snapshotId, opts).catch(() => {})
    }
  })
})

hostTest('a server in the sandbox is reached by getHost(8000) with no domain and by /proxy', async () => {
  await withSandbox(async (sbx) => {
    await sbx.files.write('/home/user/www/index.html', 'served from the sandbox')
    await sbx.commands.run('python3 -m http.server 8000 --bind 0.0.0.0 --directory /home/user/www', { background: true })
    const host = sbx.getHost(8000)
    assert.equal(host, `8000-${sbx.sandboxId}.localhost:${new URL(server.url).port}`)
    const page = await waitFor(async () => {
      const r = await rawRequest('/index.html', { Host: host })
      return r.status === 200 ? r : null
    }, { timeoutMs: 20_000, what: 'the sandbox HTTP server' })
    assert.equal(page.body, 'served from the sandbox')
    const byPath = await rawRequest(`/proxy/${sbx.sandboxId}/8000/index.html`)
    assert.equal(byPath.body, 'served from the sandbox')
  })
})

// An HTTP server in the sandbox that answers every GET with the Host header it received.
const HOST_ECHO = `
import http.server
class Echo(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = (self.headers.get('Host') or '').encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(('0.0.0.0', 8001), Echo).serve_forever()
`

hostTest('maskRequestHost: the sandbox\'s server gets the mask, port filled in, as Host', async () => {
  await withSandbox(async (sbx) => {
    await sbx.files.write('/home/user/host_echo.py', HOST_ECHO)
    await sbx.commands.run('python3 /home/user/host_echo.py', { background: true })
    const seen = await waitFor(async () => {
      const r = await rawRequest('/', { Host: sbx.getHost(8001) })
      return r.status === 200 ? r.body : null
    }, { timeoutMs: 20_000, what: 'the Host echo server' })
    assert.equal(seen, 'localhost:8001')
    assert.equal((await rawRequest(`/proxy/${sbx.sandboxId}/8001/`)).body, 'localhost:8001')
    assert.equal((await sbx.getInfo()).network.maskRequestHost, 'localhost:${PORT}')
  }, { network: { maskRequestHost: 'localhost:${PORT}' } })
})

// A WebSocket echo server in the sandbox using only Python's standard library (the template has no WebSocket package).
const WS_ECHO = `
import base64, hashlib, socket, struct, threading
GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'
def recvn(c, n):
    b = b''
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            raise EOFError
        b += x
    return b
def handle(c):
    data = b''
    while b'\\r\\n\\r\\n' not in data:
        data += c.recv(4096)
    lines = data.decode().split('\\r\\n')[1:]
    headers = {l.split(':', 1)[0].strip().lower(): l.split(':', 1)[1].strip() for l in lines if ':' in l}
    accept = base64.b64encode(hashlib.sha1((headers['sec-websocket-key'] + GUID).encode()).digest()).decode()
    c.sendall(('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n'
               'Sec-WebSocket-Accept: ' + accept + '\\r\\n\\r\\n').encode())
    while True:
        h = recvn(c, 2)
        op, n = h[0] & 15, h[1] & 127
        if n == 126:
            n = struct.unpack('>H', recvn(c, 2))[0]
        elif n == 127:
            n = struct.unpack('>Q', recvn(c, 8))[0]
        mask = recvn(c, 4) if h[1] & 128 else b'\\0\\0\\0\\0'
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(recvn(c, n)))
        if op == 8:
            c.sendall(b'\\x88\\x00')
            return
        if op in (1, 2):
            size = bytes([len(payload)]) if len(payload) < 126 else b'\\x7e' + struct.pack('>H', len(payload))
            c.sendall(bytes([0x80 | op]) + size + payload)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', 8765))
s.listen()
while True:
    conn, _ = s.accept()
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
`

hostTest('a WebSocket echo inside the sandbox works through the proxy', async () => {
  await withSandbox(async (sbx) => {
    await sbx.files.write('/home/user/ws_echo.py', WS_ECHO)
    await sbx.commands.run('python3 /home/user/ws_echo.py', { background: true })
    await waitFor(async () => (await sbx.commands.run('python3 -c "import socket; socket.create_connection((\'127.0.0.1\', 8765))"')
      .then(() => true, () => false)), { timeoutMs: 20_000, what: 'the sandbox WebSocket server' })
    const url = server.url.replace('http://', 'ws://') + `/proxy/${sbx.sandboxId}/8765/`
    const ws = new WebSocket(url)
    const messages = []
    await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject })
    ws.onmessage = (e) => messages.push(String(e.data))
    ws.send('echo through the proxy')
    await waitFor(() => messages.length > 0, { what: 'the echo' })
    assert.equal(messages[0], 'echo through the proxy')
    ws.close()
  })
})

hostTest('pty and a directory watch stream through the proxy', async () => {
  await withSandbox(async (sbx) => {
    let output = ''
    const decoder = new TextDecoder()
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { output += decoder.decode(d) } })
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('echo pty-$((6*7))\n'))
    await waitFor(() => output.includes('pty-42'), { what: 'pty output' })
    assert.equal(await sbx.pty.kill(pty.pid), true)

    await sbx.files.makeDir('/home/user/watched')
    const events = []
    const watcher = await sbx.files.watchDir('/home/user/watched', (e) => events.push(e))
    try {
      await sbx.files.write('/home/user/watched/new.txt', 'x')
      await waitFor(() => events.some((e) => e.name === 'new.txt'), { what: 'a watch event' })
    } finally {
      await watcher.stop()
    }
  })
})

hostTest('a paused sandbox with autoResume is resumed by its first proxied request', async () => {
  await withSandbox(async (sbx) => {
    await sbx.files.write('/home/user/before.txt', 'before the pause')
    assert.equal(await sbx.pause(), true)
    assert.equal((await sbx.getInfo()).state, 'paused')
    assert.equal(await sbx.files.read('/home/user/before.txt'), 'before the pause')
    assert.equal((await sbx.getInfo()).state, 'running')
  }, { timeoutMs: 60_000, lifecycle: { onTimeout: 'pause', autoResume: true } })
})

hostTest('a kill mid-stream gives the SDK\'s "killed" error; then isRunning is false', async () => {
  const sbx = await Sandbox.create('base', opts)
  const handle = await sbx.commands.run('sleep 300', { background: true })
  await sbx.kill()
  await assert.rejects(handle.wait(), /killed or reached its end of life/)
  assert.equal(await sbx.isRunning(), false)
})

hostTest('e2b 2.50 (v1 create and connect routes): commands and files, pause and connect', async () => {
  const sbx = await SandboxV250.create('base', opts)
  try {
    assert.equal((await sbx.commands.run('echo v1')).stdout, 'v1\n')
    await sbx.files.write('/home/user/v1.txt', 'v1 file')
    assert.equal(await sbx.pause(), true)
    assert.equal(await sbx.isRunning(), false)
    await sbx.connect()
    assert.equal(await sbx.files.read('/home/user/v1.txt'), 'v1 file')
  } finally {
    await sbx.kill()
  }
})

hostTest('v1 create, onTimeout pause without memory: on timeout files kept, processes not', async () => {
  const sbx = await SandboxV250.create('base', {
    ...opts, timeoutMs: 120_000, lifecycle: { onTimeout: { action: 'pause', keepMemory: false } },
  })
  try {
    await sbx.files.write('/home/user/fs-only.txt', 'kept on disk')
    await sbx.commands.run('sleep 86400', { background: true })
    await waitFor(async () => (await sbx.commands.run('pgrep -x sleep || true')).stdout.trim() !== '',
      { timeoutMs: 20_000, what: 'the background process' })
    await sbx.setTimeout(1_000) // the TTL pauses it from here on
    await waitFor(async () => (await SandboxV250.getInfo(sbx.sandboxId, opts)).state === 'paused',
      { timeoutMs: 60_000, what: 'the timeout pause' })
    const resumed = await SandboxV250.connect(sbx.sandboxId, opts)
    assert.equal(await resumed.files.read('/home/user/fs-only.txt'), 'kept on disk')
    const after = await resumed.commands.run('pgrep -x sleep || echo none')
    assert.equal(after.stdout, 'none\n', 'a pause without memory boots afresh: the earlier process is gone')
  } finally {
    await SandboxV250.kill(sbx.sandboxId, opts)
  }
})

hostTest('getMetrics reports the sandbox\'s own CPU and memory limits; logs from its envd', async () => {
  await withSandbox(async (sbx) => {
    const info = await sbx.getInfo()
    await sbx.commands.run('echo metrics-probe')
    const metrics = await waitFor(async () => {
      const m = await sbx.getMetrics()
      return m.length > 0 ? m : null
    }, { timeoutMs: 30_000, what: 'a metrics sample' })
    const last = metrics[metrics.length - 1]
    assert.ok(!Number.isNaN(last.timestamp.getTime()), 'timestamp is a valid date')
    assert.ok(Math.abs(Date.now() - last.timestamp.getTime()) < 120_000, 'timestamp is recent')
    assert.equal(last.cpuCount, info.cpuCount, 'cpuCount is the sandbox’s, not the host’s')
    const limitBytes = info.memoryMB * 1024 * 1024
    assert.ok(last.memTotal > 0 && last.memTotal <= limitBytes, `memTotal ${last.memTotal} is within the sandbox limit ${limitBytes}`)
    assert.ok(last.memUsed > 0 && last.memUsed <= last.memTotal, 'memUsed is within memTotal')
    assert.ok(last.diskTotal > 0 && last.diskUsed >= 0 && last.diskUsed <= last.diskTotal, 'disk figures are consistent')

    const res = await fetch(`${server.url}/v2/sandboxes/${sbx.sandboxId}/logs`, { headers: { 'X-API-Key': server.apiKey } })
    assert.equal(res.status, 200)
    const body = await res.json()
    assert.ok(Array.isArray(body.logs) && body.logs.length > 0, 'envd’s log has entries')
  })
})
