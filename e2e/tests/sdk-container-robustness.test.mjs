// What an E2B SDK user sees at the edges of a container sandbox's life, with the unmodified npm `e2b` SDK against the
// server jar and the real container backend: every sandbox slot taken (429 RateLimitError naming the limit, no retry;
// per child for a fork),
// envd killed inside a sandbox (it comes back with the same env vars, user and token, and commands work again), and a
// sandbox whose container died (it disappears: getInfo answers not found, it is no longer listed), and a kill (it answers
// once nothing of the sandbox runs; the release follows).
// Needs root and scripts/setup-host.sh; skipped otherwise (failed when AENV_REQUIRE_HOST_TESTS=1). The server runs with
// its own names and two network slots, no warm pool.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { Sandbox, RateLimitError, SandboxNotFoundError } from 'e2b'
import { startSuiteServer, stopSuiteServer, sandboxContainer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'
import { waitFor } from '../lib/envd-harness.mjs'

const RUN_DIR = '/run/agentenv/e2e-robust'
const ID_PREFIX = 'rob-'

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvr',
  runDir: RUN_DIR,
  cgroupParent: 'agentenv-e2e-robust',
  firstSlot: 12320,
  idPrefix: ID_PREFIX,
}

let server
let opts

before(async () => {
  if (!unready) ({ server, opts } = await startSuiteServer(LANE, {
    AENV_BACKEND_POOL_SIZE: '0',
    AENV_BACKEND_MAX_SANDBOXES: '2',
    AENV_BACKEND_MEMORY_MB: '512',
  }))
})

after(async () => {
  if (server) await stopSuiteServer(server, LANE)
})

hostTest('all slots taken: create fails at once with a RateLimitError; a kill frees one', async () => {
  const first = await Sandbox.create('base', opts)
  const second = await Sandbox.create('base', opts)
  try {
    const started = Date.now()
    await assert.rejects(Sandbox.create('base', opts), (e) => {
      assert.ok(e instanceof RateLimitError, `expected a RateLimitError, got ${e}`)
      assert.match(e.message, /too many sandboxes: all 2 sandbox slots of this server are in use \(AENV_BACKEND_MAX_SANDBOXES\)/)
      return true
    })
    assert.ok(Date.now() - started < 10_000, 'no Retry-After: the SDK does not wait and retry')
    const listed = await Sandbox.list(opts).nextItems()
    assert.equal(listed.length, 2, 'the refused create left no record')
    await first.kill()
    const third = await Sandbox.create('base', opts)
    await third.kill()
  } finally {
    await first.kill().catch(() => {})
    await second.kill().catch(() => {})
  }
})

hostTest('a fork past the free slots gets the children that fit, RateLimitError the rest', async () => {
  const source = await Sandbox.create('base', opts)
  const children = []
  try {
    const results = await source.fork({ count: 3 })
    assert.equal(results.length, 3)
    children.push(...results.filter((r) => !(r instanceof Error)))
    const refused = results.filter((r) => r instanceof Error)
    assert.equal(children.length, 1, `one slot was free: ${results.map(String).join('; ')}`)
    assert.equal(refused.length, 2)
    for (const e of refused) {
      assert.ok(e instanceof RateLimitError, `expected a RateLimitError, got ${e}`)
      assert.match(e.message, /too many sandboxes: all 2 sandbox slots/)
    }
    assert.equal((await children[0].commands.run('echo child')).stdout.trim(), 'child')
    assert.equal(await source.isRunning(), true)
    assert.equal((await Sandbox.list(opts).nextItems()).length, 2, 'no record of a refused child')
  } finally {
    for (const child of children) await child.kill().catch(() => {})
    await source.kill().catch(() => {})
  }
})

hostTest('envd killed with sudo comes back; later commands keep the env vars and user', async () => {
  const sbx = await Sandbox.create('base', { ...opts, envs: { GREETING: 'hello' } })
  try {
    assert.equal((await sbx.commands.run('echo "$GREETING $(whoami)"')).stdout.trim(), 'hello user')
    // the command's own stream dies with envd, so its outcome is an error or an exit by signal
    await sbx.commands.run('sudo kill -9 $(pgrep -x java)', { timeoutMs: 15_000 }).catch(() => {})
    const after = await waitFor(async () => {
      try {
        const out = (await sbx.commands.run('echo "$GREETING $(whoami) $(pwd)"', { timeoutMs: 10_000 })).stdout.trim()
        return out === 'hello user /home/user' ? out : null
      } catch {
        return null // envd is restarting
      }
    }, { timeoutMs: 60_000, what: 'commands to work again after envd was killed' })
    assert.equal(after, 'hello user /home/user')
    // the commands may work again a moment before the re-init is logged (a node's log is read from its file)
    const reinitialised = new RegExp(`restarted envd initialised sandbox_id=${sbx.sandboxId}`)
    await waitFor(() => reinitialised.test(server.output()), { timeoutMs: 30_000, what: 'the re-init logged' })
    assert.equal(await sbx.isRunning(), true)
    assert.equal((await sbx.getInfo()).state, 'running')
  } finally {
    await sbx.kill().catch(() => {})
  }
})

hostTest('a sandbox whose container died is removed: not found, not listed, kill a no-op', async () => {
  const sbx = await Sandbox.create('base', opts)
  const container = sandboxContainer(server, LANE, sbx.sandboxId)
  const state = JSON.parse(execFileSync('runc', ['--root', container.runcRoot, 'state', container.name], { encoding: 'utf8' }))
  process.kill(state.pid, 'SIGKILL') // the container's init: everything in the sandbox dies with it

  await waitFor(async () => {
    try {
      await Sandbox.getInfo(sbx.sandboxId, opts)
      return false
    } catch (e) {
      if (e instanceof SandboxNotFoundError) return true
      throw e
    }
  }, { timeoutMs: 30_000, what: 'the dead sandbox to be removed' })
  const listed = await Sandbox.list(opts).nextItems()
  assert.ok(!listed.some((s) => s.sandboxId === sbx.sandboxId))
  assert.equal(await sbx.isRunning(), false)
  assert.equal(await Sandbox.kill(sbx.sandboxId, opts), false)
  const removed = new RegExp(`sandbox instance is gone on its own; removing the sandbox sandbox_id=${sbx.sandboxId}`)
  await waitFor(() => removed.test(server.output()), { timeoutMs: 30_000, what: 'the removal logged' })
})

hostTest('kill answers once nothing of the sandbox runs; its init is reaped after', async (t) => {
  const sbx = await Sandbox.create('base', opts)
  const container = sandboxContainer(server, LANE, sbx.sandboxId)
  const state = JSON.parse(execFileSync('runc', ['--root', container.runcRoot, 'state', container.name], { encoding: 'utf8' }))
  const freezer = `/sys/fs/cgroup/freezer/${container.cgroupParent}/${container.name}/freezer.state`
  await sbx.commands.run("trap '' TERM; sleep 600", { background: true })
  await sbx.kill()
  // at the answer the sandbox is frozen (no task of it runs again), or its release has SIGKILLed it already
  const frozen = existsSync(freezer) && readFileSync(freezer, 'utf8').trim() === 'FROZEN'
  assert.ok(frozen || dyingOrGone(state.pid), `the sandbox's init (pid ${state.pid}) runs on after the kill answered`)
  await waitFor(() => !existsSync(`/proc/${state.pid}`), { what: `the init (pid ${state.pid}) reaped` })
  const kills = [...server.output().matchAll(/killed container sandbox released.*answer_ms=(\d+) took_ms=(\d+)/g)]
  t.diagnostic(`kill answer_ms/took_ms so far: ${kills.map((m) => `${m[1]}/${m[2]}`).join(' ')}`)
})

/** Gone, a zombie, or with SIGKILL pending (bit 9 of the pending signal masks). */
function dyingOrGone(pid) {
  let status
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return true
  }
  if (/^State:\s+[ZX]/m.test(status)) return true
  return [...status.matchAll(/^(?:SigPnd|ShdPnd):\s+([0-9a-f]+)/gm)].some((m) => (BigInt('0x' + m[1]) & 0x100n) !== 0n)
}
