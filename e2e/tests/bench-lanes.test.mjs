// The benchmark lanes of bench/lib/lane.mjs: concurrent runs get different lanes, a lane is free again once its run
// ends (even killed), and no two lanes of any benchmark script share a name or a network slot. Runs in a temporary
// lock dir (AENV_BENCH_LANE_DIR), so it needs no root and never takes a lane from a real benchmark run.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { repoRoot } from '../lib/control-plane-harness.mjs'

const laneModule = join(repoRoot, 'bench', 'lib', 'lane.mjs')
const { LANES, LAYOUTS, laneEnv } = await import(laneModule)

/** A process that claims a lane and holds it until its stdin closes; resolves with it and its lane. */
async function holder(dir) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    const { claimLane } = await import(${JSON.stringify(laneModule)})
    try { console.log('lane ' + await claimLane()) } catch (e) { console.log('none ' + e.message) }
    process.stdin.resume()`], { env: { ...process.env, AENV_BENCH_LANE_DIR: dir }, stdio: ['pipe', 'pipe', 'ignore'] })
  const [line] = await once(child.stdout, 'data')
  const text = String(line).trim()
  return { child, lane: text.startsWith('lane ') ? Number(text.slice(5)) : null, text }
}

test('concurrent runs get distinct lanes; all taken is an error; a kill frees a lane', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aenv-lanes-'))
  const holders = []
  t.after(() => {
    for (const h of holders) h.child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  })
  for (let i = 0; i < LANES; i++) holders.push(await holder(dir))
  assert.deepEqual(holders.map((h) => h.lane).sort((a, b) => a - b), [...Array(LANES).keys()])

  const extra = await holder(dir)
  holders.push(extra)
  assert.equal(extra.lane, null)
  assert.match(extra.text, /all 8 benchmark lanes are taken/)

  const victim = holders[3]
  victim.child.kill('SIGKILL')
  await once(victim.child, 'exit')
  let again
  const deadline = Date.now() + 10_000
  do { // the lock goes with the holder's flock child, which sees its stdin close right after
    if (again) again.child.kill('SIGKILL')
    again = await holder(dir)
    holders.push(again)
  } while (again.lane === null && Date.now() < deadline)
  assert.equal(again.lane, victim.lane)
})

test('other languages claim through `node lane.mjs hold`, held until its stdin closes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aenv-lanes-'))
  const children = []
  t.after(() => {
    for (const c of children) c.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  })
  const hold = async () => {
    const child = spawn(process.execPath, [laneModule, 'hold'], { env: { ...process.env, AENV_BENCH_LANE_DIR: dir },
      stdio: ['pipe', 'pipe', 'pipe'] })
    children.push(child)
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    const exited = once(child, 'exit')
    await Promise.race([once(child.stdout, 'data'), exited])
    return { child, exited, out: () => out.trim(), err: () => err }
  }
  const first = await hold()
  const second = await hold()
  assert.deepEqual([first.out(), second.out()].sort(), ['0', '1'])

  first.child.stdin.end() // the script ended: its lane is free again
  const [code] = await first.exited
  assert.equal(code, 0)
  let again
  const deadline = Date.now() + 10_000
  do { // the flock child sees its stdin close right after the holder exits
    if (again) again.child.kill('SIGKILL')
    again = await hold()
  } while (again.out() !== first.out() && Date.now() < deadline)
  assert.equal(again.out(), first.out())

  for (let i = 2; i < LANES; i++) await hold()
  const none = await hold()
  const [status] = await none.exited
  assert.equal(status, 1)
  assert.equal(none.out(), '')
  assert.match(none.err(), /all 8 benchmark lanes are taken/)
})

test('no two benchmark lanes share a name, runc dir, cgroup, id prefix or network slot', () => {
  const used = []
  for (const [script, layout] of Object.entries(LAYOUTS)) {
    for (let lane = 0; lane < LANES; lane++) {
      const env = laneEnv(lane, layout)
      const first = Number(env.AENV_BACKEND_FIRST_SLOT)
      used.push({ who: `${script} lane ${lane}`, env, from: first, to: first + layout.slots })
    }
  }
  // ranges used by others on the same host: the host's server, the server's host tests, run.sh, the e2e suites
  const others = [['host server', 0, 1024], ['server host tests', 8192, 8224], ['run.sh lanes', 9216, 9216 + 64 * 8],
    ['e2e suites', 12288, 12808], ['console browser suite', 13312, 13320]]
  for (const [i, a] of used.entries()) {
    for (const [who, from, to] of others) assert.ok(a.to <= from || a.from >= to, `${a.who} overlaps ${who}`)
    for (const b of used.slice(i + 1)) {
      assert.ok(a.to <= b.from || a.from >= b.to, `${a.who} and ${b.who} share network slots`)
      for (const key of ['AENV_BACKEND_NAME_PREFIX', 'AENV_BACKEND_RUN_DIR', 'AENV_BACKEND_CGROUP_PARENT', 'AENV_BACKEND_ID_PREFIX']) {
        assert.notEqual(a.env[key], b.env[key], `${a.who} and ${b.who} share ${key}`)
      }
    }
    assert.ok(a.env.AENV_BACKEND_NAME_PREFIX.length <= 7, 'netns/veth prefixes stay short (interface names are 15 bytes)')
    assert.match(a.env.AENV_BACKEND_ID_PREFIX, /^[a-z0-9][a-z0-9-]{0,30}$/)
  }
  assert.throws(() => laneEnv(8, LAYOUTS.sdk), /lane must be 0..7/)
})
