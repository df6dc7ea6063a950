// The e2e leak check itself (e2e/lib/host-leaks.mjs): it sees a mount left in a runc state root (as a failed
// `runc restore` leaves its criu-root), a mount and a loop device under a server's data dir and a slot's netns name,
// and it refuses to remove a data dir with something mounted below it. Needs root (mount, losetup); skipped otherwise.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, truncateSync, existsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hostLeftovers, stopAndAssertNoLeftovers } from '../lib/host-leaks.mjs'

const root = typeof process.getuid === 'function' && process.getuid() === 0
const rootTest = (name, fn) => test(name, { skip: root ? false : 'needs root (mount, losetup)', timeout: 30_000 }, fn)

rootTest('a mount in the runc state root, a disk mount and its loop device under the data dir are all found', () => {
  const base = mkdtempSync(join(tmpdir(), 'aenv-leaks-'))
  const dataDir = join(base, 'data')
  const runDir = join(base, 'run')
  const criuRoot = join(runDir, 'runc', 'sdk-x', 'criu-root')
  const diskDir = join(dataDir, 'sandboxes', 'sdk-x', 'disk')
  const image = join(dataDir, 'sandboxes', 'sdk-x', 'disk.img')
  mkdirSync(criuRoot, { recursive: true })
  mkdirSync(diskDir, { recursive: true })
  writeFileSync(image, '')
  truncateSync(image, 8 * 1024 * 1024)
  const mounted = []
  let loop
  try {
    execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', criuRoot])
    mounted.push(criuRoot)
    loop = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim()

    const left = hostLeftovers({ dataDir, runDir, namePrefix: 'aenvleaktest' })

    assert.deepEqual(left.mounts, [criuRoot])
    assert.equal(left.loops.length, 1)
    assert.match(left.loops[0], new RegExp(`^${loop.replace('/dev/', '')} -> ${image}$`))
    assert.deepEqual(left.netns, [])
  } finally {
    for (const point of mounted.reverse()) execFileSync('umount', [point])
    if (loop) execFileSync('losetup', ['--detach', loop])
    rmSync(base, { recursive: true, force: true })
  }
  assert.deepEqual(hostLeftovers({ dataDir, runDir, namePrefix: 'aenvleaktest' }),
    { mounts: [], loops: [], netns: [] })
})

rootTest('a server that left a mount under its data dir fails the check and keeps its data dir', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'aenv-leaks-'))
  const point = join(dataDir, 'sandboxes', 'sdk-y', 'rootfs')
  mkdirSync(point, { recursive: true })
  execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', point])
  try {
    const stopped = { dataDir, stop: async () => ({ code: 143 }) }

    await assert.rejects(stopAndAssertNoLeftovers(stopped, { runDir: join(dataDir, 'run'), namePrefix: 'aenvleaktest', withinMs: 200 }),
      (e) => e.message.includes(point))
    assert.ok(existsSync(point), 'the data dir stays while something is mounted below it')
  } finally {
    execFileSync('umount', [point])
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('a stopped server that left nothing passes and its data dir is removed', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'aenv-leaks-'))
  const stopped = { dataDir, stop: async () => ({ code: 143 }) }

  await stopAndAssertNoLeftovers(stopped, { runDir: join(dataDir, 'run'), namePrefix: 'aenvleaktest' })

  assert.equal(existsSync(dataDir), false)
})
