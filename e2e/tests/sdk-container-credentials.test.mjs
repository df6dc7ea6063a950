// Commands of the sandbox's `user` start without setpriv: envd (root in the sandbox) gives one dedicated thread
// ("envd-spawn-as-user") the user's credentials around posix_spawn. Through the unmodified npm `e2b` SDK against the
// server jar with the real container backend: the child has the user's ids and groups and no capabilities; envd's
// other threads never run as the user while 20 commands start at once as `user` and `root`; a cwd the user cannot
// enter fails the start (as E2B's envd: credentials are set before the chdir); stdin and pty commands (still through
// setpriv) keep working; a paused, resumed and forked sandbox keeps starting commands this way. Relative paths of
// files, signed URLs and cwd resolve against the requesting user's home (root: /root), as E2B's envd resolves them.
// Run under `flock /tmp/agentenv-container-e2e.lock` (fixed names). Needs root and scripts/setup-host.sh.
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox } from 'e2b'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'
import { waitFor } from '../lib/envd-harness.mjs'

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvu',
  runDir: '/run/agentenv/e2e-creds',
  cgroupParent: 'agentenv-e2e-creds',
  firstSlot: 13056,
  idPrefix: 'crd-',
}

let server
let opts

before(async () => {
  if (!unready) ({ server, opts } = await startSuiteServer(LANE, {
    AENV_SANDBOX_DOMAIN: 'sandbox.test',
    AENV_BACKEND_MAX_SANDBOXES: '8',
    AENV_BACKEND_MEMORY_MB: '512',
  }))
})

after(async () => {
  if (server) await stopSuiteServer(server, LANE)
})

async function withSandbox(fn) {
  const sbx = await Sandbox.create('base', opts)
  try {
    return await fn(sbx)
  } finally {
    await sbx.kill().catch(() => {})
  }
}

/** The fields of /proc/self/status as a command of `user` sees them. */
async function statusAs(sbx, user, runOpts = {}) {
  const { stdout } = await sbx.commands.run('cat /proc/self/status', { user, ...runOpts })
  return Object.fromEntries(stdout.split('\n').filter((l) => l.includes(':'))
    .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]))
}

/** envd's pid in the sandbox: the process with the switching thread (so the direct path is in use). */
async function envdPid(sbx) {
  const { stdout } = await sbx.commands.run(
    "grep -l '^envd-spawn-as-u' /proc/[0-9]*/task/*/comm | cut -d/ -f3 | sort -u", { user: 'root' })
  const pids = stdout.trim().split('\n').filter(Boolean)
  assert.equal(pids.length, 1, `one envd with a switching thread (got ${JSON.stringify(pids)})`)
  return pids[0]
}

async function assertUserCredentials(sbx, label) {
  const groups = (await sbx.commands.run('id -G user', { user: 'root' })).stdout.trim()
  const child = await statusAs(sbx, 'user')
  assert.equal(child.Uid, '1000\t1000\t1000\t1000', `${label}: real, effective, saved, fs uid`)
  assert.equal(child.Gid, '1000\t1000\t1000\t1000', `${label}: gids`)
  assert.equal(child.Groups, groups, `${label}: exactly the user's groups`)
  for (const set of ['CapEff', 'CapPrm', 'CapAmb', 'CapInh']) assert.equal(child[set], '0000000000000000', `${label}: ${set}`)
  const envd = (await sbx.commands.run(`cat /proc/${await envdPid(sbx)}/status`, { user: 'root' })).stdout
  const noNewPrivs = envd.split('\n').find((l) => l.startsWith('NoNewPrivs:')).split(':')[1].trim()
  assert.equal(child.NoNewPrivs, noNewPrivs, `${label}: no_new_privs as envd's`)
}

hostTest('a user\'s command has its ids, only its groups, no capabilities; root stays root', async () => {
  await withSandbox(async (sbx) => {
    await assertUserCredentials(sbx, 'fresh sandbox')
    const root = await statusAs(sbx, 'root')
    assert.equal(root.Uid, '0\t0\t0\t0')
    const envd = (await sbx.commands.run(`cat /proc/${await envdPid(sbx)}/status`, { user: 'root' })).stdout
    assert.match(envd, /^CapEff:\s*(\w+)$/m)
    assert.equal(root.CapEff, envd.match(/^CapEff:\s*(\w+)$/m)[1], 'root\'s commands keep envd\'s capabilities')

    // stdin and pty commands still start through setpriv: same ids
    assert.equal((await statusAs(sbx, 'user', { stdin: true })).Uid, '1000\t1000\t1000\t1000')
    let ptyOut = ''
    const decoder = new TextDecoder()
    const pty = await sbx.pty.create({ cols: 80, rows: 24, user: 'user', onData: (d) => { ptyOut += decoder.decode(d) } })
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('echo "pty-uid-$(id -u)"\n'))
    await waitFor(() => ptyOut.includes('pty-uid-1000'), { what: 'the pty\'s uid' })
    assert.equal(await sbx.pty.kill(pty.pid), true)

    // environment and cwd as before; a cwd the user cannot enter fails the start
    const env = await sbx.commands.run('echo "$FOO $(pwd) $(whoami)"', { user: 'user', envs: { FOO: 'bar' }, cwd: '/tmp' })
    assert.equal(env.stdout, 'bar /tmp user\n')
    await assert.rejects(sbx.commands.run('true', { user: 'user', cwd: '/root' }), /Permission denied/)
    assert.equal((await sbx.commands.run('pwd', { user: 'root', cwd: '/root' })).stdout, '/root\n')

    // a running command of user can be killed
    const sleeper = await sbx.commands.run('sleep 600', { user: 'user', background: true })
    assert.equal(await sbx.commands.kill(sleeper.pid), true)
  })
})

hostTest('relative paths resolve in the user\'s home: root\'s files, URLs and cwd in /root', async () => {
  await withSandbox(async (sbx) => {
    const asRoot = await sbx.files.write('hello.txt', 'written as root', { user: 'root' })
    assert.equal(asRoot.path, '/root/hello.txt')
    assert.equal(await sbx.files.read('hello.txt', { user: 'root' }), 'written as root')
    assert.equal((await sbx.commands.run('stat -c %U /root/hello.txt', { user: 'root' })).stdout, 'root\n')
    assert.equal(await sbx.files.exists('/home/user/hello.txt'), false)

    const asUser = await sbx.files.write('hello.txt', 'written as user')
    assert.equal(asUser.path, '/home/user/hello.txt')
    assert.equal(await sbx.files.read('/root/hello.txt', { user: 'root' }), 'written as root')

    const form = new FormData()
    form.append('file', new Blob(['uploaded for root']), 'signed.txt')
    const upload = await fetch(await sbx.uploadUrl('signed.txt', { user: 'root' }), { method: 'POST', body: form })
    assert.equal(upload.status, 200, await upload.clone().text())
    assert.equal((await upload.json())[0].path, '/root/signed.txt')
    const download = await fetch(await sbx.downloadUrl('signed.txt', { user: 'root' }))
    assert.equal(await download.text(), 'uploaded for root')

    assert.equal((await sbx.files.makeDir('sub', { user: 'root' })), true)
    assert.deepEqual((await sbx.files.list('sub', { user: 'root' })), [])
    assert.equal((await sbx.commands.run('pwd', { user: 'root', cwd: 'sub' })).stdout, '/root/sub\n')
    assert.equal((await sbx.files.getInfo('sub', { user: 'root' })).path, '/root/sub')
  })
})

hostTest('20 commands at once as user and root: no other envd thread runs as the user', async () => {
  await withSandbox(async (sbx) => {
    const pid = await envdPid(sbx)
    // samples every thread of envd but the switching one until told to stop; prints what ran as anyone but root
    const sampler = await sbx.commands.run(
      `n=0; while [ ! -e /tmp/stop-sampling ]; do for t in /proc/${pid}/task/*; do ` +
      `c=$(cat $t/comm 2>/dev/null) || continue; u=$(grep '^Uid:' $t/status 2>/dev/null) || continue; ` +
      `case "$c" in envd-spawn-as-u*) ;; *) case "$u" in *'	0	0	0	0') ;; *) echo "$c $u";; esac;; esac; done; n=$((n+1)); done; echo samples=$n`,
      { user: 'root', background: true })
    const runs = Array.from({ length: 20 }, (_, i) => {
      const user = i % 2 === 0 ? 'user' : 'root'
      return sbx.commands.run('id -u; id -g', { user }).then((r) => ({ user, out: r.stdout }))
    })
    for (const { user, out } of await Promise.all(runs)) {
      const id = user === 'user' ? '1000' : '0'
      assert.deepEqual(out.trim().split('\n'), [id, id], `${user}'s command`)
    }
    await sbx.commands.run('touch /tmp/stop-sampling', { user: 'root' })
    const sampled = await sampler.wait()
    assert.match(sampled.stdout, /samples=[1-9]\d*\n$/)
    assert.equal(sampled.stdout.replace(/samples=\d+\n$/, ''), '', 'no thread of envd but the switching one ran as the user')
  })
})

hostTest('pause, resume and fork: commands keep starting as the user without setpriv', async () => {
  await withSandbox(async (sbx) => {
    const sleeper = await sbx.commands.run('sleep 600', { user: 'user', background: true })
    assert.equal(await sbx.pause(), true)
    await sbx.connect()
    await assertUserCredentials(sbx, 'resumed')
    assert.ok((await sbx.commands.list()).some((p) => p.pid === sleeper.pid), 'the user\'s process survived the pause')
    const [child] = await sbx.fork({ count: 1 })
    assert.ok(!(child instanceof Error), String(child))
    try {
      await assertUserCredentials(child, 'forked')
    } finally {
      await child.kill()
    }
    assert.equal(await sbx.commands.kill(sleeper.pid), true)
  })
})
