// Pseudo-terminals end to end: create, input, resize, kill with the npm `e2b` SDK in debug mode.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Sandbox } from 'e2b'
import { startEnvd, ensureTestUser, waitFor } from '../lib/envd-harness.mjs'

let envd
let sbx

// as root, shells run as a plain account (see envd-process.test.mjs)
const defaultUser = ensureTestUser('envd-e2e')

before(async () => {
  envd = await startEnvd({ init: defaultUser ? { defaultUser } : {} })
  sbx = await Sandbox.create({ debug: true })
})

after(async () => {
  await envd?.stop()
})

const decoder = new TextDecoder()
const encode = (s) => new TextEncoder().encode(s)

async function openTerminal(opts = {}) {
  let screen = ''
  const terminal = await sbx.pty.create({
    cols: 80, rows: 24, cwd: '/tmp', timeoutMs: 0,
    onData: (data) => { screen += decoder.decode(data) },
    ...opts,
  })
  return { terminal, screen: () => screen }
}

test('a pty runs an interactive shell that echoes input and sees a terminal', async () => {
  const { terminal, screen } = await openTerminal()
  await sbx.pty.sendInput(terminal.pid, encode('tty && echo "term=$TERM"\n'))
  await waitFor(() => /\/dev\/pts\/\d+/.test(screen()) && screen().includes('term=xterm-256color'), { what: 'tty output' })
  await sbx.pty.sendInput(terminal.pid, encode('exit 7\n'))
  const result = await terminal.wait().catch((e) => e)
  assert.equal(result.exitCode, 7)
})

test('resizing a pty changes what the shell sees', async () => {
  const { terminal, screen } = await openTerminal()
  await sbx.pty.resize(terminal.pid, { cols: 123, rows: 45 })
  await sbx.pty.sendInput(terminal.pid, encode('stty size\n'))
  await waitFor(() => screen().includes('45 123'), { what: 'new size' })
  assert.equal(await sbx.pty.kill(terminal.pid), true)
})

test('killing a pty ends it and a second kill finds nothing', async () => {
  const { terminal } = await openTerminal()
  assert.equal(await sbx.pty.kill(terminal.pid), true)
  const result = await terminal.wait().catch((e) => e)
  assert.equal(result.exitCode, -1)
  await waitFor(async () => !(await sbx.commands.list()).some((p) => p.pid === terminal.pid), { what: 'pty gone from list' })
  assert.equal(await sbx.pty.kill(terminal.pid), false)
})

test('a pty can be reconnected to after a disconnect', async () => {
  const { terminal } = await openTerminal()
  await terminal.disconnect()
  let screen = ''
  const again = await sbx.pty.connect(terminal.pid, { onData: (d) => { screen += decoder.decode(d) } })
  await sbx.pty.sendInput(terminal.pid, encode('echo reattached-$((20+22))\n'))
  await waitFor(() => screen.includes('reattached-42'), { what: 'output after reconnect' })
  assert.equal(await sbx.pty.kill(again.pid), true)
})
