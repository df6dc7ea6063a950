// Template builds with the unmodified npm `e2b` SDK's Template builder against the server jar with the real container
// backend: the steps run in a build sandbox through envd (RUN as root and as the default user, ENV, WORKDIR, USER),
// their output reaches onBuildLogs, and sandboxes created from the template see its files and environment; a failing
// step fails Template.build with the step and its exit code, and no build sandbox is left behind; COPY steps upload a
// file, a directory and a symbolic link from a context directory, and the template's sandboxes see them where E2B
// puts them, with the owner, mode and link target asked for.
// Run under `flock /tmp/agentenv-container-e2e.lock` (fixed names). Needs root and scripts/setup-host.sh.
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Sandbox, Template } from 'e2b'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvt',
  runDir: '/run/agentenv/e2e-templates',
  cgroupParent: 'agentenv-e2e-templates',
  firstSlot: 13568,
  idPrefix: 'tpl-',
}

let server
let opts

before(async () => {
  if (!unready) ({ server, opts } = await startSuiteServer(LANE, {
    AENV_BACKEND_MAX_SANDBOXES: '6',
    AENV_BACKEND_MEMORY_MB: '512',
  }))
})

after(async () => {
  if (server) await stopSuiteServer(server, LANE)
})

async function sandboxCount() {
  const res = await fetch(`${server.url}/v2/sandboxes`, { headers: { 'X-API-Key': server.apiKey } })
  assert.equal(res.status, 200)
  return (await res.json()).length
}

hostTest('an SDK-built template ran its steps; its sandboxes see its files and env', async () => {
  const logs = []
  const template = Template()
    .fromBaseImage()
    .setEnvs({ GREETING: 'hello from the template' })
    .setWorkdir('/srv/app')
    .runCmd('echo "$GREETING" > /srv/app/greeting.txt && chown user: /srv/app/greeting.txt', { user: 'root' })
    .runCmd('echo "built in $(pwd) by $(whoami)"')
    .setUser('root')
    .runCmd('whoami > /srv/app/last-user')
  await Template.build(template, 'e2e-built', { ...opts, onBuildLogs: (entry) => logs.push(entry.message) })

  assert.ok(logs.includes('built in /srv/app by user'), logs.join('\n'))
  assert.equal(await Template.exists('e2e-built', opts), true)
  assert.equal(await sandboxCount(), 0, 'the build sandbox was killed')
  const sbx = await Sandbox.create('e2e-built', opts)
  try {
    assert.equal(await sbx.files.read('/srv/app/greeting.txt'), 'hello from the template\n')
    assert.equal(await sbx.files.read('/srv/app/last-user'), 'root\n')
    const env = await sbx.commands.run('echo "$GREETING"')
    assert.equal(env.stdout, 'hello from the template\n')
  } finally {
    await sbx.kill()
  }
})

hostTest('a failing step fails Template.build with the step and its exit code', async () => {
  const logs = []
  await assert.rejects(
    Template.build(Template().fromBaseImage().runCmd('echo about to fail; exit 7'), 'e2e-broken',
      { ...opts, onBuildLogs: (entry) => logs.push(entry.message) }),
    (e) => /step 1 \(RUN echo about to fail; exit 7\) exited with code 7/.test(e.message))
  assert.ok(logs.includes('about to fail'), logs.join('\n'))
  assert.equal(await Template.exists('e2e-broken', opts), false)
  assert.equal(await sandboxCount(), 0, 'the build sandbox was killed')
})

hostTest('COPY steps place a file, a directory and a symlink with owner and mode', async () => {
  const context = mkdtempSync(join(tmpdir(), 'aenv-copy-context-'))
  try {
    writeFileSync(join(context, 'config.txt'), 'config\n')
    mkdirSync(join(context, 'site', 'css'), { recursive: true })
    writeFileSync(join(context, 'site', 'index.html'), '<h1>hi</h1>\n')
    writeFileSync(join(context, 'site', 'css', 'main.css'), 'body {}\n')
    symlinkSync('etc/config.txt', join(context, 'current'))
    const logs = []
    const template = Template({ fileContextPath: context })
      .fromBaseImage()
      .setWorkdir('/srv/app')
      .copy('config.txt', 'etc/', { mode: 0o640 }) // relative to the WORKDIR, into a directory, as the USER (user)
      .copy('site', '/var/www/site', { user: 'root' }) // a directory's contents become /var/www/site
      .copy('current', '/srv/app/current') // a symbolic link, kept as a link
    await Template.build(template, 'e2e-copied', { ...opts, onBuildLogs: (entry) => logs.push(entry.message) })
    assert.ok(logs.includes("Uploaded 'site'"), logs.join('\n'))
    assert.equal(await sandboxCount(), 0, 'the build sandbox was killed')

    const sbx = await Sandbox.create('e2e-copied', opts)
    try {
      const stat = async (path) => (await sbx.commands.run(`stat -c '%U:%G %a %F' ${path}`)).stdout.trim()
      assert.equal(await sbx.files.read('/srv/app/etc/config.txt'), 'config\n')
      assert.equal(await stat('/srv/app/etc/config.txt'), 'user:user 640 regular file')
      assert.equal(await sbx.files.read('/var/www/site/index.html'), '<h1>hi</h1>\n')
      assert.equal(await sbx.files.read('/var/www/site/css/main.css'), 'body {}\n')
      assert.equal(await stat('/var/www/site/css/main.css'), 'root:root 644 regular file')
      assert.equal(await stat('/var/www/site'), 'root:root 755 directory')
      assert.equal(await stat('/srv/app/current'), 'user:user 777 symbolic link')
      assert.equal((await sbx.commands.run('readlink /srv/app/current')).stdout, 'etc/config.txt\n')
      assert.equal(await sbx.files.read('/srv/app/current'), 'config\n')
      const left = await sbx.commands.run('ls -A /tmp | grep -c aenv-copy || true')
      assert.equal(left.stdout.trim(), '0', 'the archives and their extraction were removed')
    } finally {
      await sbx.kill()
    }
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
})
