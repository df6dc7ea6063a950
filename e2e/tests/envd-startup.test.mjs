// envd's start-up as a process: a port it cannot listen on ends it with a clear error (the server starts on its own
// thread while main wires, and main reports the failure). Uses a kernel-chosen port, not 49983.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import net from 'node:net'
import { envdCommand } from '../lib/envd-harness.mjs'

function listen() {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.listen(0, '127.0.0.1', () => resolve(server))
  })
}

// runs envd until it exits by itself; resolves to its exit code and what it wrote on stderr
function runToExit(args, timeoutMs = 30_000) {
  const [java, argv] = envdCommand(args)
  const child = spawn(java, argv, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`envd still running after ${timeoutMs} ms:\n${stderr}`))
    }, timeoutMs)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stderr })
    })
  })
}

test('envd that cannot listen on its port exits with 1 and says so', async () => {
  const taken = await listen()
  try {
    const { port } = taken.address()
    const { code, stderr } = await runToExit(['--port', String(port), '--host', '127.0.0.1', '--log-level', 'WARN'])
    assert.equal(code, 1)
    assert.match(stderr, /ERROR Main .*envd could not listen port=\d+/)
    assert.match(stderr, /BindException/)
  } finally {
    await new Promise((r) => taken.close(r))
  }
})
