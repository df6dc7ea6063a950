// A sandbox's disk size through the unmodified npm `e2b` SDK against the server jar with the real container backend:
// every sandbox writes to its own disk of AENV_BACKEND_DISK_MB (here 1024, E2B's smallest), which GET /sandboxes/{id}
// and the list report as diskSizeMB, `df /` and envd's metrics show, and which a write cannot go past (files.write gets
// envd's 507, the SDK's NotEnoughSpaceError) while the sandbox runs on.
// Needs root and a host prepared by scripts/setup-host.sh; skipped otherwise (failed when AENV_REQUIRE_HOST_TESTS=1).
// The server runs with its own names and network slots, so it does not touch a server or test run next to it.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox, NotEnoughSpaceError } from 'e2b'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'

const DISK_MB = 1024

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvd',
  runDir: '/run/agentenv/e2e-disk',
  cgroupParent: 'agentenv-e2e-disk',
  firstSlot: 12800,
  idPrefix: 'dsk-',
}

let server
let opts

before(async () => {
  if (!unready) ({ server, opts } = await startSuiteServer(LANE, {
    AENV_BACKEND_MAX_SANDBOXES: '8',
    AENV_BACKEND_POOL_SIZE: '1',
    AENV_BACKEND_DISK_MB: String(DISK_MB),
  }))
})

after(async () => {
  if (server) await stopSuiteServer(server, LANE)
})

async function api(path) {
  const res = await fetch(`${server.url}${path}`, { headers: { 'X-API-Key': server.apiKey } })
  assert.equal(res.status, 200, `GET ${path}`)
  return res.json()
}

hostTest('diskSizeMB is reported and shown by df and envd; a write past it gets 507', async () => {
  const sbx = await Sandbox.create('base', opts)
  try {
    const detail = await api(`/sandboxes/${sbx.sandboxId}`)
    assert.equal(detail.diskSizeMB, DISK_MB)
    const listed = (await api('/sandboxes')).find((s) => s.sandboxID === sbx.sandboxId)
    assert.equal(listed.diskSizeMB, DISK_MB)
    const info = await Sandbox.getInfo(sbx.sandboxId, opts)
    assert.equal(info.cpuCount, detail.cpuCount)
    assert.equal(info.memoryMB, detail.memoryMB)

    const df = await sbx.commands.run('df -B1M --output=size,avail / | tail -n 1')
    const [sizeMb] = df.stdout.trim().split(/\s+/).map(Number)
    assert.ok(sizeMb > DISK_MB - 40 && sizeMb <= DISK_MB, `df / shows ${sizeMb} MiB`)
    const [metrics] = await sbx.getMetrics()
    const envdMb = metrics.diskTotal / (1 << 20)
    assert.ok(envdMb > sizeMb - 1 && envdMb <= sizeMb, `envd's diskTotal is ${envdMb} MiB, df's ${sizeMb} MiB`)

    // fill the disk to ~64 MiB below its end, then write 128 MiB through envd's file API
    await sbx.commands.run(`fallocate -l ${sizeMb - 64}M /home/user/fill`)
    const tooBig = new Uint8Array(128 << 20).fill(7)
    await assert.rejects(sbx.files.write('/home/user/too-big', tooBig), (e) => e instanceof NotEnoughSpaceError)

    assert.equal((await sbx.commands.run('echo alive')).stdout, 'alive\n')
    const dd = await sbx.commands.run('dd if=/dev/zero of=/home/user/more bs=1M count=256 2>&1 || true')
    assert.match(dd.stdout, /No space left on device/)
    await sbx.commands.run('rm -f /home/user/fill /home/user/more /home/user/too-big')
    await sbx.files.write('/home/user/fits', tooBig)
    assert.equal((await sbx.files.getInfo('/home/user/fits')).size, tooBig.length)
  } finally {
    await sbx.kill().catch(() => {})
  }
})
