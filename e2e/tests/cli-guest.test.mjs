// The built `aenv` CLI (agentenv-cli/target/aenv.jar) reaching into a sandbox: exec, files, logs and metrics, all
// through the server (API key; envd through the sandbox proxy with the routing headers and the envd token). The server
// runs the mock backend, whose every running sandbox reports one local envd process (started here on a free port and
// a unix socket, so no lock on 49983 is needed) as its guest endpoint. Most commands run through the launcher bin/aenv
// as a fresh machine runs it: no JAVA_HOME, and the PATH's java first (the distribution's, older than 25).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, freePort, repoRoot } from '../lib/control-plane-harness.mjs'
import { startEnvd, ensureTestUser } from '../lib/envd-harness.mjs'

const aenvJar = join(repoRoot, 'agentenv-cli', 'target', 'aenv.jar')
const launcher = join(repoRoot, 'bin', 'aenv')

let envd
let server
let workDir
let sandboxId

/**
 * Runs bin/aenv to its exit; `input` (string or Buffer) becomes its stdin, which is then closed. `apiKey: null` leaves
 * AENV_API_KEY unset; `env` adds variables. The user's config is a fresh directory unless `env` names one.
 */
function aenv(args, { input, apiKey = server.apiKey, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const childEnv = { PATH: `/usr/bin:/bin:${process.env.PATH}`, AENV_API_URL: server.url, XDG_CONFIG_HOME: join(workDir, 'no-config'), ...env }
    if (apiKey !== null) childEnv.AENV_API_KEY = apiKey
    const child = spawn(launcher, args, { stdio: ['pipe', 'pipe', 'pipe'], env: childEnv })
    const out = []
    const err = []
    child.stdout.on('data', (d) => out.push(d))
    child.stderr.on('data', (d) => err.push(d))
    child.on('error', reject)
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout: Buffer.concat(out), out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() })
    })
    child.stdin.on('error', () => { /* aenv may exit before reading all of it */ })
    child.stdin.end(input)
  })
}

/** One error line on stderr, no stack trace. */
function assertOneLineError(result, pattern) {
  assert.equal(result.code, 1, `exit ${result.code}, stderr: ${result.err}`)
  assert.match(result.err, pattern)
  assert.equal(result.err.trim().split('\n').length, 1, result.err)
  assert.doesNotMatch(result.err, /Exception|\tat /)
}

before(async () => {
  if (!existsSync(aenvJar)) throw new Error(`aenv jar missing: ${aenvJar} (build it: mvn -B -pl agentenv-cli -am package -DskipTests)`)
  delete process.env.E2B_DEBUG
  workDir = mkdtempSync(join(tmpdir(), 'cli-guest-'))
  chmodSync(workDir, 0o777) // envd's default user writes here
  const user = ensureTestUser()
  envd = await startEnvd({ port: await freePort(), args: user ? ['--default-user', user] : [] })
  server = await startServer({
    backend: 'mock',
    env: { AENV_BACKEND_GUEST_ENDPOINT: `127.0.0.1:${envd.port}`, AENV_BACKEND_GUEST_UNIX_SOCKET: envd.socketPath },
  })
  const created = await aenv(['create', 'base', '--timeout', '600'])
  assert.equal(created.code, 0, created.err)
  sandboxId = created.out.trim()
})

after(async () => {
  try {
    if (server) await server.stop()
  } finally {
    if (envd) await envd.stop()
    if (workDir) rmSync(workDir, { recursive: true, force: true })
  }
})

test('exec streams stdout and stderr apart and exits with the command\'s code', async () => {
  const r = await aenv(['exec', sandboxId, '-c', 'echo out; echo err >&2; exit 7'])
  assert.equal(r.code, 7, r.err)
  assert.equal(r.out, 'out\n')
  assert.equal(r.err, 'err\n')

  const ok = await aenv(['exec', sandboxId, '--', 'true'])
  assert.equal(ok.code, 0, ok.err)
})

test('exec quotes an argv exactly and passes env and cwd', async () => {
  const r = await aenv(['exec', sandboxId, '--', 'printf', '%s|', 'a b', "c'd", '$HOME', ''])
  assert.equal(r.code, 0, r.err)
  assert.equal(r.out, "a b|c'd|$HOME||")

  const env = await aenv(['exec', sandboxId, '--env', 'FOO=bar baz', '--cwd', workDir, '-c', 'echo "$FOO"; pwd'])
  assert.equal(env.code, 0, env.err)
  assert.equal(env.out, `bar baz\n${workDir}\n`)
})

test('a death by signal exits 128+N and --timeout exits 124', async () => {
  const killed = await aenv(['exec', sandboxId, '-c', 'kill -TERM $$'])
  assert.equal(killed.code, 143, killed.err)

  const started = Date.now()
  const slow = await aenv(['exec', sandboxId, '--timeout', '1', '--', 'sleep', '30'])
  assert.equal(slow.code, 124, `exit ${slow.code}: ${slow.err}`)
  assert.match(slow.err, /timed out/)
  assert.ok(Date.now() - started < 25_000, 'the timeout ended the command')
})

test('Ctrl-C (SIGINT) terminates the remote command and exits 130', async () => {
  const java = join(process.env.JAVA_HOME || '/usr/lib/jvm/temurin-25-jdk-amd64', 'bin', 'java')
  const marker = `sleep ${4000 + Math.floor(Math.random() * 1000)}`
  const child = spawn(java, ['-jar', aenvJar, 'exec', sandboxId, '--no-stdin', '-c', `echo ready; ${marker}; echo never`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, AENV_API_URL: server.url, AENV_API_KEY: server.apiKey },
  })
  let out = ''
  let err = ''
  child.stderr.on('data', (d) => { err += d })
  const exited = new Promise((resolve) => child.once('close', (code) => resolve(code)))
  try {
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (d) => { out += d; if (out.includes('ready')) resolve() })
      child.once('close', () => reject(new Error(`aenv exited before the command started: ${err}`)))
    })
    child.kill('SIGINT')
    assert.equal(await exited, 130, err)
  } finally {
    child.kill('SIGKILL')
  }
  assert.match(err, /interrupted: sent SIGTERM/)
  assert.doesNotMatch(out, /never/)
  const left = await aenv(['exec', sandboxId, '-c', `pgrep -f '^${marker}$' || echo none`])
  assert.equal(left.out.trim(), 'none', 'the remote command is gone')
})

test('killing the sandbox while exec streams ends aenv with one error line', async () => {
  const other = await aenv(['create', 'base'])
  assert.equal(other.code, 0, other.err)
  const id = other.out.trim()
  const java = join(process.env.JAVA_HOME || '/usr/lib/jvm/temurin-25-jdk-amd64', 'bin', 'java')
  const child = spawn(java, ['-jar', aenvJar, 'exec', id, '--no-stdin', '--timeout', '20', '-c', 'echo ready; sleep 15'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, AENV_API_URL: server.url, AENV_API_KEY: server.apiKey },
  })
  let err = ''
  child.stderr.on('data', (d) => { err += d })
  const exited = new Promise((resolve) => child.once('close', (code) => resolve(code)))
  try {
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (d) => { if (String(d).includes('ready')) resolve() })
      child.once('close', () => reject(new Error(`aenv exited before the command started: ${err}`)))
    })
    assert.equal((await aenv(['kill', id])).code, 0)
    assert.equal(await exited, 1, err)
  } finally {
    child.kill('SIGKILL')
  }
  assert.match(err, /^error: the stream from sandbox .* broke off .*killed or paused\?\n$/)
})

test('exec -t attaches a terminal-sized remote pty, passes the exit code (script(1))', async () => {
  const java = join(process.env.JAVA_HOME || '/usr/lib/jvm/temurin-25-jdk-amd64', 'bin', 'java')
  const run = (command, input) => new Promise((resolve, reject) => {
    // script gives aenv a local terminal (30 rows, 100 columns) and types `input` into it
    const child = spawn('script', ['-qec', `stty rows 30 cols 100; ${command}`, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, AENV_API_URL: server.url, AENV_API_KEY: server.apiKey, TERM: 'xterm' },
    })
    let out = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { out += d })
    child.on('error', reject)
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out }) })
    child.stdin.end(input)
  })
  const aenvTty = `${java} -jar ${aenvJar} exec -t ${sandboxId}`
  const once = await run(`${aenvTty} -- bash -c 'read x; echo "got:$x"; tty; stty size; exit 5'`, 'hello\n')
  assert.equal(once.code, 5, once.out)
  assert.match(once.out, /got:hello\r\n\/dev\/pts\/\d+\r\n30 100\r\n/)

  const shell = await run(aenvTty, 'echo "sum=$((40+2))"\nexit 3\n')
  assert.equal(shell.code, 3, shell.out)
  assert.match(shell.out, /sum=42/)
})

test('exec forwards stdin when it is not a terminal, byte for byte', async () => {
  const lines = await aenv(['exec', sandboxId, '--', 'wc', '-l'], { input: 'one\ntwo\nthree\n' })
  assert.equal(lines.code, 0, lines.err)
  assert.equal(lines.out.trim(), '3')

  const data = randomBytes(200_000)
  const echoed = await aenv(['exec', sandboxId, '--', 'cat'], { input: data })
  assert.equal(echoed.code, 0, echoed.err)
  assert.ok(echoed.stdout.equals(data), `cat returned ${echoed.stdout.length} of ${data.length} bytes`)

  const none = await aenv(['exec', sandboxId, '--no-stdin', '--', 'cat'], { input: 'ignored' })
  assert.equal(none.code, 0, none.err)
  assert.equal(none.out, '')
})

test('files put then get round-trips binary data, from a file and from stdin', async () => {
  const data = randomBytes(300_000)
  const local = join(workDir, 'local.bin')
  writeFileSync(local, data)
  const remote = join(workDir, 'remote', 'data.bin')

  const put = await aenv(['files', 'put', sandboxId, local, remote])
  assert.equal(put.code, 0, put.err)
  assert.match(put.out, /wrote .*data\.bin/)

  const get = await aenv(['files', 'get', sandboxId, remote, '-'])
  assert.equal(get.code, 0, get.err)
  assert.ok(get.stdout.equals(data), `got ${get.stdout.length} bytes`)

  const copy = join(workDir, 'copy.bin')
  const toFile = await aenv(['files', 'get', sandboxId, remote, copy])
  assert.equal(toFile.code, 0, toFile.err)
  assert.ok(readFileSync(copy).equals(data))

  const piped = randomBytes(70_000)
  const fromStdin = await aenv(['files', 'put', sandboxId, '-', join(workDir, 'piped.bin')], { input: piped })
  assert.equal(fromStdin.code, 0, fromStdin.err)
  assert.ok(readFileSync(join(workDir, 'piped.bin')).equals(piped))
})

test('files ls lists a directory as table and JSON; rm removes; missing is one error', async () => {
  const dir = join(workDir, 'tree')
  const mk = await aenv(['exec', sandboxId, '-c', `mkdir -p ${dir}/sub && echo hi > ${dir}/a.txt && echo x > ${dir}/sub/b.txt`])
  assert.equal(mk.code, 0, mk.err)

  const table = await aenv(['files', 'ls', sandboxId, dir])
  assert.equal(table.code, 0, table.err)
  assert.match(table.out, /^TYPE\s+PERMISSIONS/)
  assert.match(table.out, new RegExp(`file\\s+-rw-r--r--.*\\s3\\s.*${dir}/a\\.txt`))
  assert.match(table.out, new RegExp(`dir\\s+drwx.*${dir}/sub\\n`))
  assert.doesNotMatch(table.out, /b\.txt/)

  const deep = await aenv(['files', 'ls', sandboxId, dir, '--depth', '2', '-o', 'json'])
  assert.equal(deep.code, 0, deep.err)
  const paths = JSON.parse(deep.out).entries.map((e) => e.path).sort()
  assert.deepEqual(paths, [`${dir}/a.txt`, `${dir}/sub`, `${dir}/sub/b.txt`])

  const rm = await aenv(['files', 'rm', sandboxId, `${dir}/a.txt`])
  assert.equal(rm.code, 0, rm.err)
  assert.equal(existsSync(join(dir, 'a.txt')), false)

  assertOneLineError(await aenv(['files', 'get', sandboxId, `${dir}/a.txt`]), /^error: .*(not found|does not exist)/i)
  assertOneLineError(await aenv(['files', 'ls', sandboxId, `${dir}/nope`]), /^error: \[not_found\]/)
})

test('logs and metrics come from the control plane', async () => {
  const logs = await aenv(['logs', sandboxId, '-o', 'json'])
  assert.equal(logs.code, 0, logs.err)
  assert.ok(Array.isArray(JSON.parse(logs.out)))
  const text = await aenv(['logs', sandboxId, '--tail', '--limit', '5'])
  assert.equal(text.code, 0, text.err)

  const metrics = await aenv(['metrics', sandboxId, '-o', 'json'])
  assert.equal(metrics.code, 0, metrics.err)
  const samples = JSON.parse(metrics.out)
  assert.ok(samples.length >= 1)
  assert.ok(samples[0].cpuCount >= 1 && samples[0].memTotal > 0, metrics.out)
  const table = await aenv(['metrics', sandboxId])
  assert.equal(table.code, 0, table.err)
  assert.match(table.out, /^TIME\s+CPUS\s+CPU %/)
})

test('templates lists the server\'s built-in templates (GET /templates)', async () => {
  const r = await aenv(['templates'])
  assert.equal(r.code, 0, r.err)
  assert.match(r.out, /^TEMPLATE ID\s+NAMES\s+STATUS\s+TAGS\s+CREATED/)
  assert.match(r.out, /^base\s+base\s+ready\s/m)
})

test('an unknown sandbox, a paused one and a wrong key are one-line errors with exit 1', async () => {
  assertOneLineError(await aenv(['exec', 'zzzzzzzzzzzzzzzzzzzz', '--', 'true']), /^error: .*not found/)
  assertOneLineError(await aenv(['files', 'ls', sandboxId, '/'], { apiKey: 'e2b_' + '0'.repeat(40) }), /^error: .*AENV_API_KEY/)

  const other = await aenv(['create', 'base'])
  assert.equal(other.code, 0, other.err)
  const id = other.out.trim()
  try {
    assert.equal((await aenv(['pause', id])).code, 0)
    assertOneLineError(await aenv(['exec', id, '--', 'true']), /^error: sandbox .* is paused .*aenv connect/)
  } finally {
    await aenv(['kill', id])
  }
})

test('the launcher runs on a JDK 25 although the PATH\'s java is older', async () => {
  const r = await aenv(['--version'])
  assert.equal(r.code, 0, r.err)
  assert.equal(r.out, 'aenv 0.1.0\n')
})

test('start runs a piped script in a new sandbox, then kills it; --keep keeps it', async () => {
  const r = await aenv(['start', 'base'], { input: 'echo "in $0"\nexit 4\n' })
  assert.equal(r.code, 4, r.err)
  assert.equal(r.out, 'in bash\n')
  const id = r.err.match(/^aenv: sandbox (\S+) \(killed when the shell ends/)?.[1]
  assert.ok(id, r.err)
  assert.match(r.err, new RegExp(`aenv: killed sandbox ${id}\n$`))
  assertOneLineError(await aenv(['info', id]), /^error: .*not found/)

  const kept = await aenv(['start', '--keep'], { input: 'true\n' })
  assert.equal(kept.code, 0, kept.err)
  const keptId = kept.err.match(/^aenv: sandbox (\S+) \(kept/)?.[1]
  assert.ok(keptId, kept.err)
  try {
    const info = await aenv(['info', keptId, '-o', 'json'])
    assert.equal(info.code, 0, info.err)
    assert.equal(JSON.parse(info.out).state, 'running')
  } finally {
    await aenv(['kill', keptId])
  }
})

test('files put -r then get -r round-trips a directory tree', async () => {
  const local = join(workDir, 'tree-out')
  mkdirSync(join(local, 'sub', 'deeper'), { recursive: true })
  mkdirSync(join(local, 'empty'))
  const big = randomBytes(5 << 20)
  writeFileSync(join(local, 'a.txt'), 'a\n')
  writeFileSync(join(local, 'sub', 'b with space.txt'), 'b\n')
  writeFileSync(join(local, 'sub', 'deeper', 'big.bin'), big)
  const remote = join(workDir, 'tree-remote')

  const put = await aenv(['files', 'put', '-r', sandboxId, local, remote])
  assert.equal(put.code, 0, put.err)
  assert.equal(put.out, `wrote 3 files (5.0 MiB) to ${remote}\n`)
  assert.equal(put.err, '', 'no progress bar: stderr is not a terminal')

  const back = join(workDir, 'tree-back')
  const get = await aenv(['files', 'get', '-r', sandboxId, remote, back])
  assert.equal(get.code, 0, get.err)
  assert.equal(get.out, `got 3 files (5.0 MiB) into ${back}\n`)
  const list = (dir, prefix = '') => readdirSync(dir, { withFileTypes: true }).sort((x, y) => x.name.localeCompare(y.name))
    .flatMap((e) => e.isDirectory() ? [`${prefix}${e.name}/`, ...list(join(dir, e.name), `${prefix}${e.name}/`)] : [`${prefix}${e.name}`])
  assert.deepEqual(list(back), list(local))
  assert.deepEqual(list(back), ['a.txt', 'empty/', 'sub/', 'sub/b with space.txt', 'sub/deeper/', 'sub/deeper/big.bin'])
  assert.ok(readFileSync(join(back, 'sub', 'deeper', 'big.bin')).equals(big))
  assert.equal(readFileSync(join(back, 'sub', 'b with space.txt'), 'utf8'), 'b\n')
})

test('auth login saves URL and key (0600) for later commands; env wins; logout forgets', async () => {
  const config = mkdtempSync(join(tmpdir(), 'cli-auth-'))
  const env = { XDG_CONFIG_HOME: config }
  try {
    const refused = await aenv(['auth', 'login'], { apiKey: null, env, input: 'e2b_' + '0'.repeat(40) + '\n' })
    assertOneLineError(refused, /^error: .*AENV_API_KEY/)
    assert.equal(existsSync(join(config, 'aenv', 'config')), false)

    const login = await aenv(['auth', 'login'], { apiKey: null, env, input: server.apiKey + '\n' })
    assert.equal(login.code, 0, login.err)
    assert.equal(login.out, `logged in to ${server.url}; saved in ${join(config, 'aenv', 'config')}\n`)
    assert.equal(statSync(join(config, 'aenv', 'config')).mode & 0o777, 0o600)

    const list = await aenv(['list'], { apiKey: null, env: { ...env, AENV_API_URL: '' } })
    assert.equal(list.code, 0, list.err)
    assert.match(list.out, new RegExp(sandboxId))

    assertOneLineError(await aenv(['list'], { apiKey: 'e2b_' + '1'.repeat(40), env }), /^error: .*AENV_API_KEY/)

    const status = await aenv(['auth', 'status'], { apiKey: null, env })
    assert.equal(status.code, 0, status.err)
    assert.match(status.out, /server\s+the server accepts the key/)
    assert.doesNotMatch(status.out + status.err + login.out + login.err, new RegExp(server.apiKey))

    const logout = await aenv(['auth', 'logout'], { apiKey: null, env })
    assert.equal(logout.code, 0, logout.err)
    assert.equal(existsSync(join(config, 'aenv', 'config')), false)
    const none = await aenv(['list'], { apiKey: null, env })
    assert.equal(none.code, 2)
    assert.match(none.err, /no API key/)
  } finally {
    rmSync(config, { recursive: true, force: true })
  }
})

test('completion bash prints a script that completes aenv\'s commands', async () => {
  const r = await aenv(['completion', 'bash'])
  assert.equal(r.code, 0, r.err)
  assert.match(r.out, /complete -F _complete_aenv/)
  for (const command of ['start', 'auth', 'files', 'exec', 'completion']) assert.match(r.out, new RegExp(`\\b${command}\\b`))
})
