// A real OCI registry for template tests: Debian's docker-registry (the reference distribution registry) on 127.0.0.1
// and a free port, its storage in a temp dir, and images made here from small root filesystems with umoci and pushed
// with skopeo. Loopback registries are pulled over plain HTTP, as Docker does, so the server needs no setting for it;
// one on another address (where a cluster's nodes, in network namespaces of their own, reach it) needs
// AENV_IMAGES_INSECURE=<address>:<port>.
//
//   const registry = await startRegistry()
//   const ref = await registry.push('musl/hello:1', await muslHelloRootfs(dir), { env: ['GREETING=hi'] })
//   ...
//   await registry.stop()
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, writeFileSync, copyFileSync, symlinkSync, rmSync, chmodSync, realpathSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export async function freePort() {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

async function listening(port, deadline, address = '127.0.0.1') {
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const socket = connect(port, address)
      socket.once('connect', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (ok) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return false
}

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts }).toString()
}

/**
 * Starts docker-registry on {@code address} (127.0.0.1 unless given) and {@code port} (a free one unless given); returns
 * { host, push(name, rootfs, config), stop() }.
 */
export async function startRegistry({ address = '127.0.0.1', port } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'aenv-registry-'))
  port ??= await freePort()
  const config = join(dir, 'config.yml')
  writeFileSync(config, [
    'version: 0.1',
    'log:',
    '  level: warn',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${join(dir, 'storage')}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: ${address}:${port}`,
    '',
  ].join('\n'))
  const child = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  if (!await listening(port, Date.now() + 30_000, address)) {
    child.kill('SIGKILL')
    throw new Error(`docker-registry did not listen on ${port}: ${stderr}`)
  }
  const host = `${address}:${port}`
  return {
    host,
    /**
     * Makes an image of {@code rootfs} (one layer; an array of directories makes a layer of each, in order) with the
     * given config and pushes it as {@code name} (repo:tag); returns the reference to pull it by.
     */
    async push(name, rootfs, { env = [], workdir, user, cmd } = {}) {
      const layout = join(dir, `layout-${name.replace(/[/:]/g, '-')}`)
      rmSync(layout, { recursive: true, force: true })
      run('umoci', ['init', '--layout', layout])
      run('umoci', ['new', '--image', `${layout}:img`])
      for (const layer of [rootfs].flat()) run('umoci', ['insert', '--image', `${layout}:img`, layer, '/'])
      const configArgs = ['config', '--image', `${layout}:img`, '--architecture', 'amd64', '--os', 'linux']
      for (const e of env) configArgs.push('--config.env', e)
      if (workdir) configArgs.push('--config.workingdir', workdir)
      if (user) configArgs.push('--config.user', user)
      if (cmd) for (const c of cmd) configArgs.push('--config.cmd', c)
      run('umoci', configArgs)
      run('skopeo', ['copy', '--dest-tls-verify=false', `oci:${layout}:img`, `docker://${host}/${name}`])
      return `${host}/${name}`
    },
    async stop() {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A musl image without a shell: musl's loader and a program linked against it (built with musl-gcc), nothing of
 * glibc, no /bin/sh, no /etc/passwd, no /tmp, no /home.
 */
export function muslHelloRootfs(parent) {
  const root = join(parent, 'musl-rootfs')
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'lib'), { recursive: true })
  mkdirSync(join(root, 'usr/bin'), { recursive: true })
  const source = join(parent, 'hello.c')
  writeFileSync(source, '#include <stdio.h>\nint main(int c, char **v) { printf("hello from musl%s%s\\n", c > 1 ? " " : "", c > 1 ? v[1] : ""); return 0; }\n')
  run('musl-gcc', ['-O2', '-o', join(root, 'usr/bin/hello'), source])
  copyFileSync(realpathSync('/usr/lib/x86_64-linux-musl/libc.so'), join(root, 'lib/ld-musl-x86_64.so.1'))
  chmodSync(join(root, 'lib/ld-musl-x86_64.so.1'), 0o755)
  return root
}

/**
 * A busybox image: /bin/sh and the usual tools as links to a static busybox, and nothing else (no bash, no
 * /etc/passwd, no user account, no /tmp, no /home).
 */
export function busyboxRootfs(parent) {
  const root = join(parent, 'busybox-rootfs')
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'bin'), { recursive: true })
  copyFileSync('/bin/busybox', join(root, 'bin/busybox'))
  chmodSync(join(root, 'bin/busybox'), 0o755)
  for (const tool of ['sh', 'ls', 'cat', 'echo', 'mkdir', 'ln', 'rm', 'mv', 'id', 'whoami', 'nc', 'sleep', 'grep',
    'cut', 'chown', 'chmod', 'touch', 'stat', 'readlink', 'pwd', 'env', 'ps', 'tar', 'httpd', 'wget']) {
    symlinkSync('busybox', join(root, 'bin', tool))
  }
  return root
}
