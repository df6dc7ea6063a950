// scripts/lib/server-jvm-options.sh, which scripts/serve.sh starts the server's JVM options through: with the JDK it is
// made for (Temurin 25) every option of agentenv-server/jvm.options; with a JDK lacking the experimental
// -XX:+AOTCompileEagerly (a stand-in: the real JDK behind a wrapper refusing that option as HotSpot refuses one it does
// not know) the options without it and a warning, instead of a server that refuses to start; with a JDK older than 25
// a clear error naming the requirement. Needs no root and starts no server.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot } from '../lib/control-plane-harness.mjs'

const script = join(repoRoot, 'scripts', 'lib', 'server-jvm-options.sh')
const optionsFile = join(repoRoot, 'agentenv-server', 'jvm.options')
const javaHome = process.env.JAVA_HOME || '/usr/lib/jvm/temurin-25-jdk-amd64' // as the harness: scripts/lib/env.sh's
const java = join(javaHome, 'bin', 'java')
const listed = readFileSync(optionsFile, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))

function options(javaPath) {
  const run = spawnSync(script, [javaPath, optionsFile], { encoding: 'utf8', timeout: 60_000 })
  return { status: run.status, lines: run.stdout.split('\n').filter(Boolean), stderr: run.stderr }
}

/** An executable `java` in a temp dir running `body` (a shell script); removed after the test. */
function fakeJava(t, body) {
  const dir = mkdtempSync(join(tmpdir(), 'aenv-fake-java-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'java')
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

test('with its own JDK every jvm.options option is kept, the experimental one too', () => {
  assert.ok(listed.includes('-XX:+AOTCompileEagerly'), 'jvm.options still uses the experimental option')
  const { status, lines, stderr } = options(java)

  assert.equal(status, 0, stderr)
  assert.deepEqual(lines, listed)
  assert.equal(stderr, '')
})

test('a JDK lacking -XX:+AOTCompileEagerly gets the rest and a warning, still starting', (t) => {
  const withoutFlag = fakeJava(t, `for a in "$@"; do
  if [ "$a" = -XX:+AOTCompileEagerly ]; then
    echo "Unrecognized VM option 'AOTCompileEagerly'" >&2; echo "Error: Could not create the Java Virtual Machine." >&2
    exit 1
  fi
done
exec ${JSON.stringify(java)} "$@"`)

  const { status, lines, stderr } = options(withoutFlag)

  assert.equal(status, 0, stderr)
  assert.deepEqual(lines, listed.filter((o) => o !== '-XX:+AOTCompileEagerly' && o !== '-XX:+UnlockExperimentalVMOptions'))
  assert.match(stderr, /does not accept the JVM option -XX:\+AOTCompileEagerly .*Temurin 25.*starts without it/)
  const started = spawnSync(withoutFlag, [...lines, '-version'], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(started.status, 0, `the JVM starts with what was printed: ${started.stderr}`)
})

test('a JDK older than 25 is refused with a message naming the requirement', (t) => {
  const old = fakeJava(t, `case " $* " in
  *" -XshowSettings:properties "*) echo "    java.specification.version = 17" >&2; echo 'openjdk version "17.0.13"' >&2 ;;
esac
for a in "$@"; do case "$a" in --enable-native-access=*) echo "Unrecognized option: $a" >&2; exit 1 ;; esac; done
exit 0`)

  const { status, lines, stderr } = options(old)

  assert.equal(status, 1)
  assert.deepEqual(lines, [])
  assert.match(stderr, /the server needs Java 25 or newer .*is Java 17: set AENV_JAVA_HOME to a JDK 25/)
})
