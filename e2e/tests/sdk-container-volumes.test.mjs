// Volumes mounted into sandboxes, through the unmodified npm `e2b` SDK against the server jar with the real container
// backend: a volume written through the content API is mounted by two sandboxes (volumeMounts by name), whose writes
// cross between them; deleting it while they mount it is refused; pause/resume and a fork child keep the mount; after
// both are killed a third sandbox and the content API read everything back; a read-only mount refuses writes; a write
// past the volume's size fails with ENOSPC inside the sandbox; a restarted server keeps the volume and mounts it again.
// Needs root and a host prepared by scripts/setup-host.sh; skipped otherwise (failed when AENV_REQUIRE_HOST_TESTS=1).
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox, Volume } from 'e2b'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvo',
  runDir: '/run/agentenv/e2e-volumes',
  cgroupParent: 'agentenv-e2e-volumes',
  firstSlot: 13824,
  idPrefix: 'vol-',
}
const ENV = {
  AENV_BACKEND_MAX_SANDBOXES: '8',
  AENV_BACKEND_POOL_SIZE: '1',
  AENV_VOLUME_DEFAULT_MB: '32',
}

let server
let opts

async function start(dataDir) {
  ;({ server, opts } = await startSuiteServer(LANE, ENV, { dataDir }))
  process.env.E2B_VOLUME_API_URL = server.url // where the SDK sends volume content requests
}

before(async () => {
  if (!unready) await start()
})

after(async () => {
  if (!server) return
  const headers = { 'X-API-Key': server.apiKey }
  for (const s of await (await fetch(server.url + '/v2/sandboxes?state=running,paused', { headers })).json()) {
    await fetch(`${server.url}/sandboxes/${s.sandboxID}`, { method: 'DELETE', headers })
  }
  for (const v of await (await fetch(server.url + '/volumes', { headers })).json()) {
    await fetch(`${server.url}/volumes/${v.volumeID}`, { method: 'DELETE', headers })
  }
  await stopSuiteServer(server, LANE)
})

async function run(sbx, cmd, user) {
  const r = await sbx.commands.run(cmd, user ? { user } : {})
  return r.stdout
}

hostTest('two sandboxes share a volume; pause, fork, kill, a third sandbox keep its data', async () => {
  const volume = await Volume.create('e2e-shared', opts)
  await volume.writeFile('/seed.txt', 'from the content API')
  const mounts = { volumeMounts: { '/data': 'e2e-shared' } }
  const a = await Sandbox.create('base', { ...opts, ...mounts })
  const b = await Sandbox.create('base', { ...opts, volumeMounts: { '/data': volume } })
  try {
    assert.equal(await run(a, 'cat /data/seed.txt'), 'from the content API')
    await run(a, 'echo written-by-a > /data/a.txt') // the default user, uid 1000
    assert.equal(await run(b, 'cat /data/a.txt'), 'written-by-a\n')
    await run(b, 'mkdir -p /data/dir && echo written-by-b > /data/dir/b.txt', 'root')
    assert.equal(await run(a, 'cat /data/dir/b.txt'), 'written-by-b\n')
    assert.equal((await a.getInfo()).volumeMounts?.[0]?.name, 'e2e-shared')

    const refused = await fetch(`${server.url}/volumes/${volume.volumeId}`, {
      method: 'DELETE',
      headers: { 'X-API-Key': server.apiKey },
    })
    assert.equal(refused.status, 409)
    assert.match((await refused.json()).message, new RegExp(a.sandboxId))

    assert.equal(await a.pause(), true)
    await run(b, 'echo while-a-was-paused > /data/paused.txt')
    await a.connect()
    assert.equal(await run(a, 'cat /data/paused.txt'), 'while-a-was-paused\n')

    const [child] = await a.fork({ count: 1 })
    assert.ok(!(child instanceof Error), String(child))
    await run(child, 'echo from-the-child > /data/child.txt')
    assert.equal(await run(b, 'cat /data/child.txt'), 'from-the-child\n')
    await child.kill()
  } finally {
    await a.kill()
    await b.kill()
  }

  const c = await Sandbox.create('base', { ...opts, ...mounts })
  try {
    assert.equal(await run(c, 'cat /data/a.txt /data/dir/b.txt /data/child.txt'),
      'written-by-a\nwritten-by-b\nfrom-the-child\n')
  } finally {
    await c.kill()
  }
  assert.equal(await volume.readFile('/dir/b.txt', { format: 'text' }), 'written-by-b\n')
  const info = await volume.getInfo('/a.txt')
  assert.equal(info.uid, 1000)
})

hostTest('a read-only mount refuses writes and a full volume gives ENOSPC inside', async () => {
  const volume = await Volume.create('e2e-small', opts)
  const res = await fetch(server.url + '/v2/sandboxes', {
    method: 'POST',
    headers: { 'X-API-Key': server.apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ templateID: 'base', timeout: 120, volumeMounts: [{ name: 'e2e-small', path: '/ro', readOnly: true }, { name: volume.volumeId, path: '/rw' }] }),
  })
  assert.equal(res.status, 201, await res.clone().text())
  const sbx = await Sandbox.connect((await res.json()).sandboxID, opts)
  try {
    const ro = await sbx.commands.run('touch /ro/x', { user: 'root' }).catch((e) => e)
    assert.match(String(ro.stderr ?? ro), /Read-only file system/)
    const full = await sbx.commands.run('dd if=/dev/zero of=/rw/big bs=1M count=64', { user: 'root' }).catch((e) => e)
    assert.match(String(full.stderr ?? full), /No space left on device/)
    await run(sbx, 'rm /rw/big')
  } finally {
    await sbx.kill()
  }
})

hostTest('a snapshot keeps its volume; one taken without can be created with one', async () => {
  const volume = await Volume.create('e2e-snap', opts)
  await volume.writeFile('/v.txt', 'in the volume')
  const plain = await Sandbox.create('base', opts)
  const mounting = await Sandbox.create('base', { ...opts, volumeMounts: { '/v': 'e2e-snap' } })
  const made = []
  try {
    await plain.files.write('/home/user/s.txt', 'in the snapshot')
    const withoutVolume = await plain.createSnapshot()
    const withVolume = await mounting.createSnapshot()
    made.push(withoutVolume.snapshotId, withVolume.snapshotId)
    const booted = await Sandbox.create(withoutVolume.snapshotId, { ...opts, volumeMounts: { '/v': 'e2e-snap' } })
    const restored = await Sandbox.create(withVolume.snapshotId, opts) // mounts the snapshot's volume
    try {
      assert.equal(await run(booted, 'cat /home/user/s.txt /v/v.txt'), 'in the snapshotin the volume')
      await run(booted, 'echo from-booted > /v/booted.txt')
      assert.equal(await run(restored, 'cat /v/booted.txt'), 'from-booted\n')
    } finally {
      await booted.kill()
      await restored.kill()
    }
  } finally {
    await plain.kill()
    await mounting.kill()
    for (const id of made) await Sandbox.deleteSnapshot(id, opts).catch(() => {})
  }
})

hostTest('a restarted server keeps the volume and mounts it again', async () => {
  const volume = await Volume.create('e2e-kept', opts)
  await volume.writeFile('/kept.txt', 'across a restart')
  const dataDir = server.dataDir
  await server.stop({ keepDataDir: true })
  server = undefined
  await start(dataDir)
  const again = await Volume.connect(volume.volumeId, opts)
  assert.equal(await again.readFile('/kept.txt', { format: 'text' }), 'across a restart')
  const sbx = await Sandbox.create('base', { ...opts, volumeMounts: { '/kept': 'e2e-kept' } })
  try {
    assert.equal(await run(sbx, 'cat /kept/kept.txt'), 'across a restart')
  } finally {
    await sbx.kill()
  }
})
