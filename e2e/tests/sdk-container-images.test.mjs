// Templates from OCI images with the unmodified npm `e2b` SDK against the server jar with the real container backend:
// images are made here from small root filesystems, pushed to a real registry on loopback (docker-registry) and built
// with Template().fromImage(...). A busybox image (a shell, no bash, no user account, no /home, no /tmp) and a musl
// image without any shell both give sandboxes whose commands run as the SDK's default user with the template's
// environment and working directory; envd and its JDK depend on nothing in the image.
// Run under `flock /tmp/agentenv-container-e2e.lock` (fixed names). Needs root and scripts/setup-host.sh.
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Sandbox, Template } from 'e2b'
import { startSuiteServer, stopSuiteServer, throughGateway, clusterServiceAddress } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'
import { repoRoot } from '../lib/control-plane-harness.mjs'
import { startRegistry, busyboxRootfs, muslHelloRootfs, freePort } from '../lib/registry.mjs'

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
  // builds, their sandboxes and the ones being released after a kill can hold more than a handful of slots at once
  const settings = { AENV_BACKEND_MAX_SANDBOXES: '12', AENV_BACKEND_MEMORY_MB: '512' }
  if (throughGateway) { // the nodes reach the registry on the cluster's service address, once the cluster made it
    const host = `${clusterServiceAddress(LANE)}:${await freePort()}`
    ;({ server, opts } = await startSuiteServer(LANE, { ...settings, AENV_IMAGES_INSECURE: host }))
    registry = await startRegistry({ address: server.serviceAddress, port: Number(host.split(':')[1]) })
  } else {
    registry = await startRegistry()
    ;({ server, opts } = await startSuiteServer(LANE, settings))
  }
  busybox = await registry.push('e2e/busybox:1', busyboxRootfs(work), {
    env: ['PATH=/bin', 'IMAGE_NAME=busybox'],
  })
  musl = await registry.push('e2e/musl-hello:1', muslHelloRootfs(work), {
    env: ['PATH=/usr/bin:/bin'],
    workdir: '/data',
  })
})

after(async () => {
  if (server) await stopSuiteServer(server, LANE)
  if (registry) await registry.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

/** bin/aenv against the suite's server, to its exit: { code, out, err }. */
function aenv(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(join(repoRoot, 'bin', 'aenv'), args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: `/usr/bin:/bin:${process.env.PATH}`, AENV_API_URL: server.url, AENV_API_KEY: server.apiKey,
        XDG_CONFIG_HOME: join(work, 'no-config') },
    })
    const out = []
    const err = []
    child.stdout.on('data', (d) => out.push(d))
    child.stderr.on('data', (d) => err.push(d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() }))
  })
}

async function sandboxCount() {
  const res = await fetch(`${server.url}/v2/sandboxes`, { headers: { 'X-API-Key': server.apiKey } })
  assert.equal(res.status, 200)
  return (await res.json()).length
}

hostTest('a busybox image template: env, workdir, start cmd, rebuild; pause, snapshot', async () => {
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

hostTest('aenv pull and aenv template build (a Dockerfile with COPY) from an image', async () => {
  const pulled = await aenv(['pull', musl, '--alias', 'e2e-musl-pulled'])
  assert.equal(pulled.code, 0, pulled.out + pulled.err)
  const context = join(work, 'context')
  mkdirSync(context, { recursive: true })
  writeFileSync(join(context, 'greeting.txt'), 'hello from the context\n')
  writeFileSync(join(context, 'Dockerfile'), [
    `FROM ${busybox}`,
    'ENV STAGE=cli',
    'WORKDIR /opt/app',
    'COPY greeting.txt /opt/app/greeting.txt',
    'RUN echo "$STAGE" > /opt/app/stage.txt',
    '',
  ].join('\n'))
  const built = await aenv(['template', 'build', context, '--alias', 'e2e-cli-built'])
  assert.equal(built.code, 0, built.out + built.err)
  assert.match(built.out, /COPY greeting\.txt/)

  const listed = await aenv(['templates'])
  assert.match(listed.out, /e2e-cli-built/)
  assert.match(listed.out, /e2e-musl-pulled/)
  const sbx = await Sandbox.create('e2e-cli-built', opts)
  try {
    const read = await sbx.commands.run('cat /opt/app/greeting.txt /opt/app/stage.txt; whoami; pwd')
    assert.equal(read.stdout, 'hello from the context\ncli\nuser\n/opt/app\n') // the Dockerfile's WORKDIR
  } finally {
    await sbx.kill()
  }
  const fromPull = await Sandbox.create('e2e-musl-pulled', opts)
  try {
    assert.equal((await fromPull.commands.run('hello pulled')).stdout, 'hello from musl pulled\n')
  } finally {
    await fromPull.kill()
  }
  const removed = await aenv(['template', 'rm', 'e2e-cli-built'])
  assert.equal(removed.code, 0, removed.out + removed.err)
  assert.equal(await Template.exists('e2e-cli-built', opts), false)
})

hostTest('an unknown image fails the build with a clear reason', async () => {
  await assert.rejects(
    Template.build(Template().fromImage(`${registry.host}/e2e/missing:1`), 'e2e-missing', opts),
    (e) => /e2e\/missing:1/.test(e.message) && /not found|unknown/i.test(e.message))
  assert.equal(await Template.exists('e2e-missing', opts), false)
  assert.equal(await sandboxCount(), 0)
})
