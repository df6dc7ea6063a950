// Templates from OCI images with the unmodified npm `e2b` SDK against the server jar with the real container backend:
// images are made here from small root filesystems, pushed to a real registry on loopback (docker-registry) and built
// with Template().fromImage(...). A busybox image (a shell, no bash, no user account, no /home, no /tmp) and a musl
// image without any shell both give sandboxes whose commands run as the SDK's default user with the template's
// environment and working directory; envd and its JDK depend on nothing in the image.
// Run under `flock /tmp/agentenv-container-e2e.lock` (fixed names). Needs root and scripts/setup-host.sh.
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Sandbox, Template } from 'e2b'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'
import { startRegistry, busyboxRootfs, muslHelloRootfs } from '../lib/registry.mjs'

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvi',
  runDir: '/run/agentenv/e2e-images',
  cgroupParent: 'agentenv-e2e-images',
  firstSlot: 13696,
  idPrefix: 'imt-',
}

let server
let opts
let registry
let work
let busybox
let musl

before(async () => {
  if (unready) return
  work = mkdtempSync(join(tmpdir(), 'aenv-images-e2e-'))
  registry = await startRegistry()
  busybox = await registry.push('e2e/busybox:1', busyboxRootfs(work), {
    env: ['PATH=/bin', 'IMAGE_NAME=busybox'],
  })
  musl = await registry.push('e2e/musl-hello:1', muslHelloRootfs(work), {
    env: ['PATH=/usr/bin:/bin'],
    workdir: '/data',
  })
  ;({ server, opts } = await startSuiteServer(LANE, {
    AENV_BACKEND_WARM_SLOTS: '1',
    AENV_BACKEND_MAX_SANDBOXES: '6',
    AENV_BACKEND_MEMORY_MB: '512',
  }))
})

after(async () => {
  if (server) await stopSuiteServer(server, LANE)
  if (registry) await registry.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

async function sandboxCount() {
  const res = await fetch(`${server.url}/v2/sandboxes`, { headers: { 'X-API-Key': server.apiKey } })
  assert.equal(res.status, 200)
  return (await res.json()).length
}

hostTest('a busybox image template: env, workdir, start cmd, cached rebuild; pause, snapshot', async () => {
  const logs = []
  const template = Template()
    .fromImage(busybox)
    .setEnvs({ APP_MODE: 'e2e' })
    .setWorkdir('/srv/app')
    .runCmd('echo "$APP_MODE from $IMAGE_NAME" > /srv/app/mode.txt', { user: 'root' })
    .runCmd('echo "built by $(whoami) in $(pwd)"')
    .makeDir('/srv/app/data', { user: 'root' })
    .makeSymlink('/srv/app/mode.txt', '/srv/app/link', { user: 'root' })
    // ready once the port answers (busybox has no ss for waitForPort, nor pgrep for waitForProcess)
    .setStartCmd('httpd -f -p 8080 -h /srv/app', 'wget -qO /dev/null http://127.0.0.1:8080/mode.txt')
  await Template.build(template, 'e2e-busybox', { ...opts, onBuildLogs: (entry) => logs.push(entry.message) })

  assert.ok(logs.includes('built by user in /srv/app'), logs.join('\n'))
  assert.equal(await sandboxCount(), 0, 'the build sandbox was killed')
  // an unchanged rebuild starts from the cached layers: no step runs again
  const again = []
  await Template.build(template, 'e2e-busybox', { ...opts, onBuildLogs: (entry) => again.push(entry.message) })
  assert.ok(again.some((m) => m.startsWith('cached: RUN ln -s')), again.join('\n'))
  assert.ok(!again.includes('built by user in /srv/app'), again.join('\n'))
  const sbx = await Sandbox.create('e2e-busybox', opts)
  try {
    // the start command runs from the first request on: the template was captured with it ready
    const served = await sbx.commands.run('wget -qO- http://127.0.0.1:8080/mode.txt')
    assert.equal(served.stdout, 'e2e from busybox\n')
    assert.equal(await sbx.files.read('/srv/app/mode.txt'), 'e2e from busybox\n')
    const who = await sbx.commands.run('echo "$(whoami) $(pwd) $HOME $APP_MODE $IMAGE_NAME"; readlink link')
    assert.equal(who.stdout, 'user /srv/app /home/user e2e busybox\n/srv/app/mode.txt\n')
    assert.equal((await sbx.commands.run('whoami', { user: 'root' })).stdout, 'root\n')

    await sbx.files.write('/srv/app/data/note.txt', 'kept')
    assert.equal(await sbx.pause(), true)
    await sbx.connect()
    assert.equal((await sbx.commands.run('wget -qO- http://127.0.0.1:8080/data/note.txt')).stdout, 'kept')

    const snapshot = await sbx.createSnapshot()
    const copy = await Sandbox.create(snapshot.snapshotId, opts)
    try {
      assert.equal(await copy.files.read('/srv/app/data/note.txt'), 'kept')
      assert.equal((await copy.commands.run('whoami; pwd')).stdout, 'user\n/srv/app\n')
    } finally {
      await copy.kill()
      await Sandbox.deleteSnapshot(snapshot.snapshotId, opts).catch(() => {})
    }
  } finally {
    await sbx.kill()
  }
})

hostTest('a musl image without a shell runs commands and its own programs', async () => {
  const logs = []
  const template = Template()
    .fromImage(musl)
    .runCmd('hello build > /data/built.txt', { user: 'root' })
  await Template.build(template, 'e2e-musl', { ...opts, onBuildLogs: (entry) => logs.push(entry.message) })

  const sbx = await Sandbox.create('e2e-musl', opts)
  try {
    assert.equal(await sbx.files.read('/data/built.txt'), 'hello from musl build\n')
    const run = await sbx.commands.run('hello sandbox; pwd')
    assert.equal(run.stdout, 'hello from musl sandbox\n/data\n')
  } finally {
    await sbx.kill()
  }
})

hostTest('an unknown image fails the build with a clear reason', async () => {
  await assert.rejects(
    Template.build(Template().fromImage(`${registry.host}/e2e/missing:1`), 'e2e-missing', opts),
    (e) => /e2e\/missing:1/.test(e.message) && /not found|unknown/i.test(e.message))
  assert.equal(await Template.exists('e2e-missing', opts), false)
  assert.equal(await sandboxCount(), 0)
})
