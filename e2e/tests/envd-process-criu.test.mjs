// envd survives a CRIU checkpoint/restore: listeners (TCP + unix socket), the /init session and the process table
// come back, running processes are still managed, new ones start. Needs root and the CRIU that scripts/setup-host.sh
// builds (its path is in $AENV_CACHE_DIR/host.env); skipped otherwise.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Sandbox, CommandExitError } from 'e2b'
import { envdCommand, ensureTestUser, ENVD_PORT, waitFor } from '../lib/envd-harness.mjs'

function criuBinary() {
  const hostEnv = join(process.env.AENV_CACHE_DIR || '/var/cache/agentenv', 'host.env')
  if (!existsSync(hostEnv)) return null
  const line = readFileSync(hostEnv, 'utf8').split('\n').find((l) => l.startsWith('AENV_CRIU='))
  const path = line?.slice('AENV_CRIU='.length).trim()
  return path && existsSync(path) ? path : null
}

const criu = criuBinary()
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
const skip = !isRoot ? 'needs root' : !criu ? 'no CRIU (run scripts/setup-host.sh)' : false

const dir = mkdtempSync(join(tmpdir(), 'envd-criu-'))
let envdPid = null

after(async () => {
  if (envdPid) {
    try { process.kill(envdPid, 'SIGTERM') } catch { /* already gone */ }
    await waitFor(() => !alive(envdPid), { what: 'envd to exit' }).catch(() => process.kill(envdPid, 'SIGKILL'))
  }
  rmSync(dir, { recursive: true, force: true })
})

function alive(pid) {
  try { process.kill(pid, 0); return true } catch { return false }
}

/** `pid` and every process below it (the children of any of its threads), from /proc. */
function processTree(pid) {
  const tree = [pid]
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
    for (const child of children ? children.split(' ') : []) tree.push(...processTree(Number(child)))
  }
  return tree
}

async function healthy(url) {
  try { return (await fetch(url)).status === 204 } catch { return false }
}

test('envd keeps its session, listeners and processes across a checkpoint and restore', { skip }, async () => {
  // given: envd in its own session (CRIU dumps a whole session), with file-backed stdio (CRIU cannot dump pipes to the
  // runner, and checks a file's size at restore: nothing else writes to envd.log), not a child of this runner (a dumped
  // child would stay a zombie holding its pid, and CRIU restores it under the same pid) but of a shell that reaps it
  // the moment the dump kills it: its processes' zombies go to the host's init and are reaped later, so the restore
  // below always meets the case of envd's pid free while its processes' are still taken (which the host's init, reaping
  // both, brought about now and then under load)
  assert.equal(await healthy(`http://localhost:${ENVD_PORT}/health`), false, `port ${ENVD_PORT} must be free`)
  const socketPath = join(dir, 'envd.sock')
  const [java, argv] = envdCommand(['--port', String(ENVD_PORT), '--unix-socket', socketPath])
  const quoted = [java, ...argv].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')
  // setsid execs (the subshell leads no process group); the shell's "Killed" goes to its own stderr, not envd.log
  const waiting = '(exec setsid "$@" </dev/null >"$0" 2>&1); true'
  const waiter = Number(execFileSync('sh', ['-c',
    `sh -c '${waiting}' '${join(dir, 'envd.log')}' ${quoted} </dev/null >/dev/null 2>&1 & echo $!`]).toString().trim())
  envdPid = await waitFor(() => { // the subshell, once it has exec'd envd
    try {
      const child = Number(readFileSync(`/proc/${waiter}/task/${waiter}/children`, 'utf8').trim())
      return readFileSync(`/proc/${child}/comm`, 'utf8') === 'java\n' ? child : 0
    } catch { return 0 }
  }, { what: 'envd started as the waiting shell\'s child' })
  await waitFor(() => healthy(`http://localhost:${ENVD_PORT}/health`), { timeoutMs: 20_000, what: 'envd ready' })

  const init = await fetch(`http://localhost:${ENVD_PORT}/init`, {
    // a plain account, not root's login profile (see envd-process.test.mjs)
    method: 'POST', body: JSON.stringify({ envVars: { BEFORE: 'checkpoint' }, defaultUser: ensureTestUser('envd-e2e') }),
  })
  assert.equal(init.status, 204)
  const sbx = await Sandbox.create({ debug: true })
  const sleeper = await sbx.commands.run('sleep 300', { background: true, timeoutMs: 0 })
  await sleeper.disconnect()

  // when
  const images = join(dir, 'img')
  execFileSync('mkdir', ['-p', images])
  const dumped = processTree(envdPid)
  assert.ok(dumped.includes(sleeper.pid), `the sleeper ${sleeper.pid} is in envd's tree ${dumped}`)
  execFileSync(criu, ['dump', '-t', String(envdPid), '-D', images, '--tcp-close', '--ext-unix-sk', '-o', 'dump.log'])
  // CRIU restores every process under its old pid and fails on one still taken ("Can't fork for <pid>: File exists"):
  // the dump kills the tree, and the sleeper's zombie holds its pid until the host's init reaps it (1-2 s here), after
  // envd's. envd's threads are gone once envd is (a thread group's leader is reaped only after all its threads).
  await waitFor(() => dumped.every((pid) => !alive(pid)), { what: 'the dump to stop envd and its processes' })
  try {
    execFileSync(criu, ['restore', '-D', images, '--tcp-close', '--ext-unix-sk', '-d', '-o', 'restore.log'])
  } catch (err) { // say why: CRIU's reason is in its log, not in its exit status
    const log = existsSync(join(images, 'restore.log')) ? readFileSync(join(images, 'restore.log'), 'utf8') : '(no log)'
    throw new Error(`criu restore failed; restore.log ends with:\n${log.split('\n').slice(-25).join('\n')}`, { cause: err })
  }

  // then
  await waitFor(() => healthy(`http://localhost:${ENVD_PORT}/health`), { what: 'envd answering after restore' })
  const overUnix = execFileSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--unix-socket', socketPath,
    'http://envd/health']).toString()
  assert.equal(overUnix, '204')
  assert.ok((await sbx.commands.list()).some((p) => p.pid === sleeper.pid), 'the process table survived')
  assert.equal((await sbx.commands.run('echo $BEFORE')).stdout, 'checkpoint\n', 'the /init env survived')
  const again = await sbx.commands.connect(sleeper.pid, { timeoutMs: 0 })
  assert.equal(await sbx.commands.kill(sleeper.pid), true)
  await assert.rejects(again.wait(), (err) => err instanceof CommandExitError && /signal: killed/.test(err.error))
})
