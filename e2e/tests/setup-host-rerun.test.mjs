// scripts/setup-host.sh run again on a host whose servers run sandboxes (a second server, scripts/cluster.sh, CI on a
// developer's machine): the resolv.conf every sandbox bind-mounts keeps its inode, since running and paused sandboxes
// and every checkpoint name it; a new file leaves them unrestorable (CRIU: "Can't re-create deleted file"). Needs root
// and a prepared host; skipped otherwise (failed when AENV_REQUIRE_HOST_TESTS=1).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../lib/control-plane-harness.mjs'
import { hostTest } from '../lib/host-tests.mjs'

const resolv = '/var/cache/agentenv/resolv.conf'

hostTest('running the host setup again keeps the sandboxes\' resolv.conf file', () => {
  const before = statSync(resolv)
  const content = readFileSync(resolv, 'utf8')
  const run = spawnSync(join(repoRoot, 'scripts', 'setup-host.sh'), [], { encoding: 'utf8', timeout: 170_000 })
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`)
  const after = statSync(resolv)
  assert.equal(after.ino, before.ino, 'the file was replaced')
  assert.equal(readFileSync(resolv, 'utf8'), content)
})
