// process.Process end to end: the unmodified npm `e2b` SDK in debug mode against the envd jar on localhost:49983.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox, CommandExitError, TimeoutError } from 'e2b'
import { Sandbox as SandboxV250 } from 'e2b-v250'
import { startEnvd, ensureTestUser, waitFor } from '../lib/envd-harness.mjs'

let envd
let sbx
// As root (CI), commands run as a plain account with a stock home, like an E2B template's "user": root's own login
// profile on these machines runs `pyenv rehash`, which is noisy under concurrency and can wait 60 s on a stale lock.
const defaultUser = ensureTestUser('envd-e2e')
const otherUser = ensureTestUser('envd-e2e-other')

before(async () => {
  envd = await startEnvd({
    init: { envVars: { SANDBOX_VAR: 'from-init' }, ...(defaultUser ? { defaultUser } : {}) },
  })
  sbx = await Sandbox.create({ debug: true })
})

after(async () => {
  await envd?.stop()
})

test('a command returns its stdout, stderr and exit code 0', async () => {
  const result = await sbx.commands.run('echo out; echo err >&2')
  assert.equal(result.exitCode, 0)
  assert.equal(result.stdout, 'out\n')
  assert.equal(result.stderr, 'err\n')
})

test('a failing command throws CommandExitError with its exit code and output', async () => {
  await assert.rejects(sbx.commands.run('echo partial; exit 3'), (err) => {
    assert.ok(err instanceof CommandExitError)
    assert.equal(err.exitCode, 3)
    assert.equal(err.stdout, 'partial\n')
    assert.match(err.error, /exit status 3/)
    return true
  })
})

test('output callbacks receive the streamed data', async () => {
  const chunks = []
  await sbx.commands.run('for i in 1 2 3; do echo line$i; done', { onStdout: (d) => chunks.push(d) })
  assert.equal(chunks.join(''), 'line1\nline2\nline3\n')
})

test('a burst of output larger than any buffer arrives completely and in order', async () => {
  // 30 MB of base64 lines: faster than the SDK reads it, so envd must slow the process down rather than drop output
  let received = 0
  let lines = 0
  const result = await sbx.commands.run('head -c 22500000 /dev/zero | base64 -w 999', {
    onStdout: (d) => { received += d.length; lines += d.split('\n').length - 1 },
  })
  assert.equal(result.exitCode, 0)
  assert.equal(received, 30_030_031)
  assert.equal(lines, 30_031)
})

test('twenty commands run in parallel each get exactly their own output', async () => {
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    sbx.commands.run(`sleep 0.$((RANDOM % 9)); echo out-${i}; echo err-${i} >&2`)))
  results.forEach((r, i) => {
    assert.equal(r.stdout, `out-${i}\n`)
    assert.equal(r.stderr, `err-${i}\n`)
  })
})

test('env vars from /init are visible and per-command envs apply to that command only', async () => {
  assert.equal((await sbx.commands.run('echo $SANDBOX_VAR')).stdout, 'from-init\n')
  assert.equal((await sbx.commands.run('echo $FOO', { envs: { FOO: 'bar', SANDBOX_VAR: 'override' } })).stdout, 'bar\n')
  assert.equal((await sbx.commands.run('echo "[$FOO]"')).stdout, '[]\n')
  assert.equal((await sbx.commands.run('echo $SANDBOX_VAR')).stdout, 'from-init\n')
})

test('the working directory can be chosen and a missing one is an invalid argument', async () => {
  assert.equal((await sbx.commands.run('pwd', { cwd: '/tmp' })).stdout, '/tmp\n')
  await assert.rejects(sbx.commands.run('pwd', { cwd: '/does/not/exist' }), /does not exist/)
})

test('a command that outlives its timeout is killed and reported as a timeout', async () => {
  const marker = `envd-e2e-timeout-${process.pid}`
  await assert.rejects(sbx.commands.run(`sleep 30 # ${marker}`, { timeoutMs: 500 }), (err) => {
    assert.ok(err instanceof TimeoutError, `expected TimeoutError, got ${err}`)
    return true
  })
  await waitFor(async () => !(await sbx.commands.list()).some((p) => p.args.join(' ').includes(marker)),
    { what: 'the timed-out process to be gone' })
})

test('a background command can be listed, connected to and killed', async () => {
  const handle = await sbx.commands.run('echo started; sleep 60', { background: true, timeoutMs: 0 })
  assert.ok(handle.pid > 0)
  await waitFor(() => handle.stdout.includes('started'), { what: 'first output' })

  const listed = (await sbx.commands.list()).find((p) => p.pid === handle.pid)
  assert.ok(listed, 'the process is listed')
  assert.equal(listed.cmd, '/bin/bash')
  assert.deepEqual(listed.args.slice(0, 2), ['-l', '-c'])

  await handle.disconnect()
  const again = await sbx.commands.connect(handle.pid, { timeoutMs: 0 })
  assert.equal(again.pid, handle.pid)
  assert.equal(await sbx.commands.kill(handle.pid), true)
  await assert.rejects(again.wait(), (err) => {
    assert.ok(err instanceof CommandExitError)
    assert.equal(err.exitCode, -1)
    assert.match(err.error, /signal: killed/)
    return true
  })
  assert.equal(await sbx.commands.kill(handle.pid), false, 'a second kill finds nothing to kill')
})

test('a process outlives its client\'s disconnect and its end can still be fetched', async () => {
  const handle = await sbx.commands.run('read line; echo got:$line', { background: true, stdin: true, timeoutMs: 0 })
  await handle.disconnect()
  await sbx.commands.sendStdin(handle.pid, 'hello\n')
  const reattached = await sbx.commands.connect(handle.pid)
  const result = await reattached.wait()
  assert.equal(result.exitCode, 0)
  // Connect attaches to live output only, so the line may have been printed while nobody listened.
  assert.ok(result.stdout === '' || result.stdout === 'got:hello\n', result.stdout)
  const late = await sbx.commands.connect(handle.pid)
  assert.equal((await late.wait()).exitCode, 0, 'an exited process still reports its end')
})

test('stdin can be written and closed', async () => {
  const handle = await sbx.commands.run('cat', { background: true, stdin: true })
  await sbx.commands.sendStdin(handle.pid, 'one\n')
  await sbx.commands.sendStdin(handle.pid, 'two\n')
  await sbx.commands.closeStdin(handle.pid)
  const result = await handle.wait()
  assert.equal(result.exitCode, 0)
  assert.equal(result.stdout, 'one\ntwo\n')
})

test('signalling or connecting to an unknown pid is not found', async () => {
  assert.equal(await sbx.commands.kill(999_999), false)
  await assert.rejects(sbx.commands.connect(999_999))
})

test('commands run as /init\'s default user or the requested one, with its home', { skip: !otherUser && 'needs root' }, async () => {
  assert.equal((await sbx.commands.run('id -un; echo $HOME; pwd')).stdout,
    `${defaultUser}\n/home/${defaultUser}\n/home/${defaultUser}\n`)
  const result = await sbx.commands.run('id -un; echo $HOME; pwd', { user: otherUser })
  assert.equal(result.stdout, `${otherUser}\n/home/${otherUser}\n/home/${otherUser}\n`)
  await assert.rejects(sbx.commands.run('true', { user: 'no-such-user-envd' }), /invalid user/)
})

test('the 2.50.0 SDK runs, lists and kills commands against the same envd', async () => {
  const old = await SandboxV250.create({ debug: true })
  assert.equal((await old.commands.run('echo old-sdk')).stdout, 'old-sdk\n')
  const handle = await old.commands.run('sleep 60', { background: true, timeoutMs: 0 })
  assert.ok((await old.commands.list()).some((p) => p.pid === handle.pid))
  assert.equal(await old.commands.kill(handle.pid), true)
  await assert.rejects(handle.wait(), /signal: killed/)
})
