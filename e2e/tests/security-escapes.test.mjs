// Escape attempts from inside real sandboxes, through the unmodified npm `e2b` SDK against the server jar with the real
// container backend: each test runs known container escapes and resource attacks in sandbox A, as root and as the
// default user, and asserts that each one failed and that the host and sandbox B are unchanged (a marker file on the
// host, the host's kernel settings and cgroup limits, B's file and open port, the server's /health).
// docs/security.md lists every attack with the layer that stops it and the test here that proves it.
//
// The system-call attacks are one Python script (e2e/lib/escape-attacks.py) uploaded into A and run once per user; it
// prints what the kernel answered and the tests below judge it. The server listens on every address (as a production
// server does), so that "the API port cannot be reached from a sandbox" is the firewall's doing, not the listen
// address's. Needs root and a host prepared by scripts/setup-host.sh; skipped otherwise (failed when
// AENV_REQUIRE_HOST_TESTS=1). The server runs with its own names and network slots, so it does not touch a server or
// test run next to it.
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { networkInterfaces } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as delay } from 'node:timers/promises'
import { execFileSync } from 'node:child_process'
import { Sandbox, CommandExitError, NotFoundError } from 'e2b'
import { startSuiteServer, stopSuiteServer } from '../lib/container-suite.mjs'
import { unready, hostTest } from '../lib/host-tests.mjs'
import { waitFor } from '../lib/envd-harness.mjs'

const DISK_MB = 1024
const MEMORY_MB = 512 // the backend's default, which the memory test reads back from the host's cgroup
const OPEN_PORT = 8000 // sandbox B serves a file here (python3 -m http.server)
const LIB = join(dirname(fileURLToPath(import.meta.url)), '..', 'lib')
const ATTACKS = readFileSync(join(LIB, 'escape-attacks.py')) // the system-call attacks, one run per user
const INT80 = readFileSync(join(LIB, 'escape-int80.c')) // the same through the 32-bit system call ABI
const REAPER = readFileSync(join(LIB, 'escape-reaper.py')) // ends the fork bomb

// the suite's own names, run dir, cgroup parent, network slots and sandbox ids (container-suite.mjs)
const LANE = {
  namePrefix: 'aenvz',
  runDir: '/run/agentenv/e2e-escape',
  cgroupParent: 'agentenv-e2e-escape',
  firstSlot: 12544,
  idPrefix: 'esc-',
}

const CGROUP_ROOT = '/sys/fs/cgroup'
const tag = randomBytes(6).toString('hex')
const marker = { path: `/tmp/aenv-escape-marker-${tag}`, content: `host only ${randomBytes(16).toString('hex')}\n` }
const secret = `sandbox B only ${randomBytes(16).toString('hex')}\n`

let server
let opts
let a // the attacker
let b // the neighbour
let facts // what the attack script is told about the host and B
let cgroupOfA // A's cgroup path below each hierarchy, e.g. /agentenv-e2e-escape/esc-<id>
let hostBefore // hostState() before any attack
let ownBefore // A's own mount table and MTU before any attack
const listeners = [] // host-side servers the attacks aim at
const attacks = {} // 'root' | 'user' -> the script's results

const read = (path) => readFileSync(path, 'utf8')
const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex')

/** What no attack may change on the host: kernel settings, release agents, A's limits, the marker, shared files. */
function hostState() {
  const hierarchies = readdirSync(CGROUP_ROOT).filter((h) => existsSync(join(CGROUP_ROOT, h, 'release_agent')))
  return {
    corePattern: read('/proc/sys/kernel/core_pattern'),
    hostname: read('/proc/sys/kernel/hostname'),
    overcommit: read('/proc/sys/vm/overcommit_memory'),
    ipForward: read('/proc/sys/net/ipv4/ip_forward'),
    transparentHugepages: read('/sys/kernel/mm/transparent_hugepage/enabled'),
    releaseAgents: Object.fromEntries(hierarchies.map((h) => [h, read(join(CGROUP_ROOT, h, 'release_agent'))])),
    limitsOfA: {
      memory: read(join(CGROUP_ROOT, 'memory', cgroupOfA, 'memory.limit_in_bytes')),
      pids: read(join(CGROUP_ROOT, 'pids', cgroupOfA, 'pids.max')),
      cpuQuota: read(join(CGROUP_ROOT, 'cpu', cgroupOfA, 'cpu.cfs_quota_us')),
      devices: read(join(CGROUP_ROOT, 'devices', cgroupOfA, 'devices.list')),
    },
    marker: { content: read(marker.path), mtimeMs: statSync(marker.path).mtimeMs },
    resolvConf: sha256('/var/cache/agentenv/resolv.conf'),
  }
}

/** Sandbox B still runs commands and serves its file, and the server answers /health. */
async function assertNeighbourAndServerWork() {
  const health = await fetch(`${server.url}/health`)
  assert.equal(health.status, 204, 'the server answers /health')
  assert.equal((await b.commands.run('cat /home/user/escape-secret.txt', { timeoutMs: 30_000 })).stdout, secret)
  const served = await fetch(`http://${facts.otherSandbox}:${OPEN_PORT}/escape-secret.txt`)
  assert.equal(await served.text(), secret, "B's open port still serves its file to the host")
}

/** The attack's outcome for both users; fails naming the attack when the script itself broke. */
function outcomes(name) {
  return Object.fromEntries(['root', 'user'].map((who) => {
    const result = attacks[who].results[name]
    assert.ok(result, `no result for '${name}' as ${who}`)
    assert.notEqual(result.outcome, 'error', `the attack '${name}' as ${who} broke: ${result.detail}`)
    return [who, result]
  }))
}

/** Each named attack failed for root and the user, with one of the errors in {@code expected}. */
function assertRefused(names, expected) {
  for (const name of names) {
    for (const [who, result] of Object.entries(outcomes(name))) {
      assert.ok(expected.includes(result.outcome),
        `'${name}' as ${who}: expected one of ${expected}, got ${JSON.stringify(result)}`)
    }
  }
}

const cgroupFile = (hierarchy, file) => join(CGROUP_ROOT, hierarchy, cgroupOfA, file)
const cgroupNumber = (hierarchy, file) => Number(read(cgroupFile(hierarchy, file)).trim().split(/\s+/)[0])

/** Retries fn until it returns without throwing, up to timeoutMs; the last error otherwise. */
async function eventually(fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await fn()
    } catch (e) {
      if (Date.now() > deadline) throw e
      await delay(200)
    }
  }
}

/** How a TCP connection from the host ends within 2 s: 'connected', 'refused', 'timeout' or another error code. */
function hostConnect(host, port) {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 })
    socket.once('connect', () => { socket.destroy(); resolve('connected') })
    socket.once('timeout', () => { socket.destroy(); resolve('timeout') })
    socket.once('error', (e) => resolve(e.code === 'ECONNREFUSED' ? 'refused' : e.code))
  })
}

/** The host's default IPv4 gateway (its own network's router), from /proc/net/route; null without one. */
function hostNetworkGateway() {
  const route = read('/proc/net/route').split('\n').slice(1).map((line) => line.split('\t'))
    .find((fields) => fields[1] === '00000000' && fields[2] !== '00000000')
  return route ? (route[2].match(/../g) ?? []).reverse().map((hex) => parseInt(hex, 16)).join('.') : null
}

async function listen(target, host) {
  const listener = createServer((socket) => socket.end('host service\n'))
  await new Promise((resolve, reject) => {
    listener.once('error', reject)
    if (host === undefined) listener.listen(target, resolve)
    else listener.listen(target, host, resolve)
  })
  listeners.push(listener)
  return listener
}

before(async () => {
  if (unready) return
  writeFileSync(marker.path, marker.content, { mode: 0o644 })
  ;({ server, opts } = await startSuiteServer(LANE, {
    AENV_BACKEND_MAX_SANDBOXES: '8',
    AENV_BACKEND_POOL_SIZE: '2',
    AENV_BACKEND_DISK_MB: String(DISK_MB),
  }, { listenHost: '0.0.0.0' }))
  ;[a, b] = await Promise.all([Sandbox.create('base', opts), Sandbox.create('base', opts)])

  await b.files.write('/home/user/escape-secret.txt', secret)
  await b.commands.run(`nohup python3 -m http.server ${OPEN_PORT} --directory /home/user >/dev/null 2>&1 &`)
  const otherSandbox = (await b.commands.run('hostname -I')).stdout.trim().split(/\s+/)[0]
  const gateway = (await a.commands.run('ip -4 route show default')).stdout.match(/via (\S+)/)[1]
  cgroupOfA = (await a.commands.run('cat /proc/self/cgroup')).stdout.match(/^\d+:pids:(\S+)$/m)[1]
  ownBefore = {
    mounts: (await a.commands.run('cat /proc/1/mountinfo', { user: 'root' })).stdout,
    mtu: (await a.commands.run('cat /sys/class/net/eth0/mtu')).stdout,
  }
  const served = async () => (await fetch(`http://${otherSandbox}:${OPEN_PORT}/escape-secret.txt`)).text()
  await eventually(async () => assert.equal(await served(), secret), 10_000) // B's server is up

  const loopbackOnly = await listen(0, '127.0.0.1')
  await listen(`\0aenv-escape-${tag}`) // an abstract unix socket in the host's network namespace
  const hostAddresses = Object.entries(networkInterfaces())
    .filter(([name]) => !name.startsWith('aenv'))
    .flatMap(([, addresses]) => addresses)
    .filter((address) => address.family === 'IPv4' && !address.internal)
    .map((address) => address.address)
  facts = {
    gateway,
    serverPort: server.port,
    sshPort: 22,
    hostAddresses,
    hostNetworkGateway: hostNetworkGateway(),
    hostLoopbackPort: loopbackOnly.address().port,
    hostAbstractSocket: `aenv-escape-${tag}`,
    otherSandbox,
    otherSandboxPort: OPEN_PORT,
    hostServerPid: server.pid,
    markerPath: marker.path,
  }
  hostBefore = hostState()

  await a.files.write('/tmp/escape-attacks.py', ATTACKS)
  await a.files.write('/tmp/escape-facts.json', JSON.stringify(facts))
  await a.files.write('/tmp/escape-int80.c', INT80)
  await a.commands.run('gcc -O1 -o /tmp/escape-int80 /tmp/escape-int80.c')
  for (const user of ['root', 'user']) { // one after the other: both exhaust descriptors and fork
    const run = await a.commands.run('python3 /tmp/escape-attacks.py /tmp/escape-facts.json',
      { user, timeoutMs: 60_000 })
    attacks[user] = JSON.parse(run.stdout)
  }
})

after(async () => {
  await Promise.all([a, b].filter(Boolean).map((sbx) => sbx.kill().catch(() => {})))
  for (const listener of listeners) listener.close()
  rmSync(marker.path, { force: true })
  if (server) await stopSuiteServer(server, LANE)
})

hostTest('root in a sandbox holds only the ten granted capabilities, under seccomp', async (t) => {
  const status = (await a.commands.run('cat /proc/self/uid_map; grep -E "^(Cap|Seccomp|NoNewPrivs)" /proc/self/status',
    { user: 'root' })).stdout
  t.diagnostic(status.replace(/\s+/g, ' ')) // the uid map as measured: docs/security.md, "Users"
  const field = (name) => status.match(new RegExp(`^${name}:\\s+(\\S+)`, 'm'))[1]
  const granted = 0x405fbn // CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE SYS_CHROOT
  for (const set of ['CapBnd', 'CapEff', 'CapPrm']) {
    assert.equal(BigInt('0x' + field(set)) & ~granted, 0n, `${set} ${field(set)} holds a capability outside the set`)
  }
  assert.equal(BigInt('0x' + field('CapBnd')) & (1n << 21n), 0n, 'CAP_SYS_ADMIN')
  assert.equal(field('Seccomp'), '2', 'a seccomp filter is in force')
  assert.equal(attacks.root.uid, 0)
  assert.equal(attacks.user.uid, 1000)
})

hostTest('mounting tmpfs, proc, sysfs or a bind of / fails; remounts too', async () => {
  assertRefused(['mount tmpfs', 'mount proc', 'mount sysfs', 'bind mount of /', 'remount /sys rw',
    'remount /proc/sys rw', 'unmount /proc/sys', 'unmount masked /proc/keys', 'fsopen tmpfs',
    'open_tree clone of /'], ['EPERM'])
  assertRefused(['mount command'], ['exit 32'])
  assert.equal((await a.commands.run('cat /proc/1/mountinfo', { user: 'root' })).stdout, ownBefore.mounts,
    "the sandbox's mount table is unchanged")
})

hostTest('cgroup release_agent, notify_on_release and own limits stay read-only', async () => {
  assertRefused(['mount cgroup v1 (memory)', 'mount cgroup v1 (rdma)'], ['EPERM'])
  assertRefused(['write release_agent', 'create a child cgroup'], ['EROFS'])
  assertRefused(['set notify_on_release', 'raise own memory limit', 'raise own pids limit', 'move into another cgroup'],
    ['EROFS', 'EACCES'])
  assert.deepEqual(outcomes('write release_agent').root.hierarchies.sort(),
    readdirSync(CGROUP_ROOT).filter((h) => existsSync(join(CGROUP_ROOT, h, 'release_agent'))).sort(),
    'every v1 hierarchy of the host was tried')
  const now = hostState()
  assert.deepEqual(now.releaseAgents, hostBefore.releaseAgents, "the host's release agents")
  assert.deepEqual(now.limitsOfA, hostBefore.limitsOfA, "A's limits as the host's cgroups hold them")
  assert.equal(read(cgroupFile('memory', 'notify_on_release')).trim(), '0')
})

hostTest('/proc/sys, /proc/sysrq-trigger and /sys refuse writes; host values kept', async () => {
  // kernel.modprobe and /proc/sysrq-trigger do not exist on kernels without modules or magic SysRq (ENOENT)
  assertRefused(['write kernel.core_pattern', 'write kernel.hostname', 'write vm.drop_caches',
    'write vm.overcommit_memory', 'write net.ipv4.ip_forward', 'write kernel.modprobe', 'write /proc/sysrq-trigger'],
  ['EROFS', 'EACCES', 'ENOENT'])
  assertRefused(['write /sys/class/net/eth0/mtu', 'write /sys/kernel/mm (THP)', 'create /sys/kernel/uevent_helper'],
    ['EROFS'])
  assertRefused(['sethostname'], ['EPERM'])
  const now = hostState()
  for (const key of ['corePattern', 'hostname', 'overcommit', 'ipForward', 'transparentHugepages']) {
    assert.equal(now[key], hostBefore[key], `the host's ${key}`)
  }
  assert.equal((await a.commands.run('cat /sys/class/net/eth0/mtu')).stdout, ownBefore.mtu, "the sandbox's own MTU")
})

hostTest('host files bound into every sandbox cannot be written or remounted', async () => {
  assertRefused(['write the shared envd jar', 'write /etc/resolv.conf'], ['EROFS', 'EACCES'])
  assertRefused(['create a file in the shared JDK', 'create a file in /dev'], ['EROFS'])
  assertRefused(['remount the JDK rw'], ['EPERM'])
  const now = hostState()
  assert.equal(now.resolvConf, hostBefore.resolvConf, "the host's resolv.conf")
  const jdkMount = "awk '$5 ~ /^\\/usr\\/lib\\/jvm\\// { print $5 }' /proc/self/mountinfo"
  const jdk = (await a.commands.run(jdkMount)).stdout.trim()
  assert.ok(jdk && !existsSync(join(jdk, 'escape')), `nothing was added to the host's JDK at ${jdk}`)
})

hostTest('kernel modules cannot be loaded or removed; kexec is refused', async () => {
  assertRefused(['init_module', 'finit_module', 'delete_module ext4', 'kexec_load'], ['EPERM'])
  assertRefused(['modprobe command'], ['absent', 'exit 1'])
})

hostTest('mknod of the host disk or /dev/mem is refused and nothing can open one', async () => {
  for (const name of ['mknod the host disk (block)', 'mknod /dev/mem (char 1:1)', 'mknod /dev/kmsg (char 1:11)']) {
    for (const [who, result] of Object.entries(outcomes(name))) {
      assert.ok(result.outcome === 'EPERM' || (result.outcome === 'ok' && result.open !== 'ok'),
        `'${name}' as ${who}: ${JSON.stringify(result)}`)
    }
  }
})

hostTest('raw and packet sockets, address and route changes are refused', async () => {
  assertRefused(['AF_PACKET raw socket', 'AF_INET SOCK_RAW (IPPROTO_RAW)', 'AF_INET SOCK_RAW (ICMP)'], ['EPERM'])
  assertRefused(["take the other sandbox's address", 'change the default route'], ['exit 2'])
  assert.doesNotMatch((await a.commands.run('ip -4 addr show dev eth0')).stdout, new RegExp(`${facts.otherSandbox}/`))
  await assertNeighbourAndServerWork()
})

hostTest('pid 1 is the sandbox init; no host process is visible or traceable', async () => {
  for (const [who, { processes }] of Object.entries(outcomes('process list'))) {
    const init = processes.find((p) => p.pid === 1)
    assert.match(init.cmd, /^\/opt\/agentenv-envd\/runtime\/bin\/tini /, `pid 1 as ${who} sees it`)
    assert.ok(processes.length < 40, `${processes.length} processes visible to ${who}`)
    assert.ok(!processes.some((p) => p.cmd.includes('io.agentenv.server.Main')), `${who} sees the host's server`)
  }
  // ptrace is the sandbox's own business: root attaches to its init, `user` to nothing of root's
  const attach = outcomes('ptrace attach pid 1')
  assert.equal(attach.root.outcome, 'attached')
  assert.equal(attach.user.outcome, 'EPERM')
  const seize = outcomes('ptrace seize pid 1')
  assert.equal(seize.root.outcome, 'attached')
  assert.equal(seize.user.outcome, 'EPERM')
  assertRefused(['process_vm_readv pid 1'], ['EPERM'])
  assertRefused(["signal the host server's pid", "ptrace attach the host server's pid"], ['ESRCH', 'pid-taken-inside'])
  assert.ok(existsSync(`/proc/${server.pid}`), 'the server process lives')
  assert.equal((await fetch(`${server.url}/health`)).status, 204)
})

hostTest("a debugger attaches to the sandbox's own processes (ptrace)", async () => {
  assertRefused(['ptrace attach own child'], ['attached']) // as root and as user; the init case is the test above
  assert.equal((await a.commands.run('echo alive')).stdout, 'alive\n', 'the init runs on after the detach')
})

hostTest('perf_event_open, bpf, keyctl, userfaultfd and io_uring are refused', async () => {
  assertRefused(['perf_event_open', 'bpf map create', 'keyctl', 'add_key', 'userfaultfd', 'io_uring_setup', 'iopl',
    'settimeofday', 'clock_settime', 'swapon', 'acct', 'reboot (CAD off)'], ['EPERM'])
  assert.equal((await fetch(`${server.url}/health`)).status, 204)
})

hostTest('unshare, setns, nsenter and chroot do not lead out of the sandbox', async () => {
  assertRefused(['unshare user namespace', 'unshare mount namespace', 'unshare cgroup namespace'], ['EPERM'])
  assertRefused(['unshare -U -r then mount', 'unshare -Urm then mount', 'nsenter -t 1 -a'], ['exit 1'])
  assertRefused(['setns into /proc/1/ns/*'], ['EPERM', 'EACCES'])
  const { root: chroot, user: chrootAsUser } = outcomes('chroot escape')
  assert.equal(chrootAsUser.outcome, 'EPERM')
  assert.equal(chroot.seesHostMarker, false, 'a double chroot reaches the host')
  assert.equal(chroot.seesOwnEnvd, true, "a double chroot ends at the sandbox's own root")
  const ownHostname = (await a.commands.run('cat /etc/hostname')).stdout.trim()
  assert.notEqual(ownHostname, read('/etc/hostname').trim(), 'the host and the sandbox name themselves apart')
  const { root: procRoot } = outcomes('/proc/1/root')
  assert.equal(procRoot.etcHostname, ownHostname, "/proc/1/root is the sandbox's root")
  assert.equal(procRoot.seesHostMarker, false)
})

hostTest('the 32-bit system call ABI (int 0x80) is filtered like the 64-bit one', async (t) => {
  const { root: control } = outcomes('int80 getpid')
  if (control.outcome === 'unavailable') return t.skip('this kernel has no IA32 emulation: nothing to filter')
  assertRefused(['int80 getpid'], ['ok']) // the ABI works in this process
  assertRefused(['int80 mount tmpfs', 'int80 syslog read all', 'int80 init_module',
    'int80 kexec_load', 'int80 keyctl', 'int80 perf_event_open', 'int80 open_by_handle_at', 'int80 bpf map create',
    'int80 AF_PACKET socket', 'int80 userfaultfd', 'int80 io_uring_setup', 'int80 reboot (CAD off)',
    'int80 unshare user namespace'], ['EPERM'])
  assertRefused(['int80 setns'], ['EPERM', 'EACCES'])
})

hostTest('open_by_handle_at (shocker) cannot open the host filesystem', async () => {
  assertRefused(['open_by_handle_at (shocker)', 'name_to_handle_at'], ['EPERM'])
})

hostTest("sysfs shows no block device's backing file (other sandboxes' disks)", async () => {
  assertRefused(['loop devices backing files in sysfs'], ['hidden'])
})

hostTest("the host's kernel log: syslog(2), dmesg, /dev/kmsg, /proc/kmsg refused", async () => {
  assertRefused(['syslog(2) read all'], ['EPERM'])
  assertRefused(['dmesg'], ['exit 1'])
  assertRefused(['read /dev/kmsg'], ['ENOENT'])
  assertRefused(['read /proc/kmsg'], ['EPERM', 'EACCES'])
  assertRefused(['/proc/kallsyms addresses'], ['zeroed'])
})

hostTest("over IPv4 the host's API, SSH, loopback and unix sockets are out of reach", async () => {
  // the API listens on every host address (the host reaches it on A's gateway): only the firewall stops A
  assert.equal((await fetch(`http://${facts.gateway}:${server.port}/health`)).status, 204)
  const onHost = ['host API port on the gateway', ...facts.hostAddresses.map((ip) => `host API port on ${ip}`)]
  assertRefused(onHost, ['timeout']) // dropped, not refused: the listener is there
  assertRefused(['host SSH port on the gateway'], ['timeout'])
  assertRefused(['host loopback-only port via 127.0.0.1'], ['refused']) // A's own loopback, where nothing listens
  assertRefused(['host abstract unix socket'], ['refused'])
  assert.equal((await fetch(`${server.url}/health`)).status, 204)
})

hostTest("over IPv6 the host's end of the sandbox's link has no address to reach", async () => {
  // the server listens dual-stack; the host end of every sandbox's veth has IPv6 off, so no link-local address
  assertRefused(['host API port over IPv6 link-local'], ['timeout', 'unreachable'])
})

hostTest("another sandbox, the host's network and the metadata address are dropped", async (t) => {
  // the host reaches B's envd and open port; A is dropped on the way
  assert.equal((await fetch(`http://${facts.otherSandbox}:49983/health`)).status, 204)
  assertRefused(['other sandbox envd port', 'other sandbox open port'], ['timeout'])
  assertRefused(['metadata address 169.254.169.254'], ['timeout', 'unreachable'])
  // the host's own router answers the host at once (refused or connected); A's packets to it are dropped
  const fromHost = facts.hostNetworkGateway ? await hostConnect(facts.hostNetworkGateway, 80) : 'no gateway'
  if (fromHost === 'refused' || fromHost === 'connected') assertRefused(["the host network's gateway"], ['timeout'])
  else t.diagnostic(`the host's gateway ${facts.hostNetworkGateway}:80 gives the host '${fromHost}': not compared`)
  await assertNeighbourAndServerWork()
})

hostTest('a fork bomb stops at the pids limit; neighbour and server keep working', async () => {
  const pidsMax = cgroupNumber('pids', 'pids.max')
  const refusedForks = () => Number(read(cgroupFile('pids', 'pids.events')).match(/^max (\d+)/m)[1])
  const refusedBefore = refusedForks()
  await a.files.write('/tmp/escape-reaper.py', REAPER)
  await a.commands.run('rm -f /tmp/escape-stop /tmp/escape-reaped; ' +
    'nohup python3 /tmp/escape-reaper.py /tmp/escape-stop /tmp/escape-reaped >/dev/null 2>&1 & ' +
    "nohup bash -c 'bomb() { bomb | bomb & }; bomb' >/dev/null 2>&1 &")
  try {
    await eventually(() => assert.ok(refusedForks() > refusedBefore, 'forks are refused at the limit'), 20_000)
    await assertNeighbourAndServerWork()
    assert.ok(cgroupNumber('pids', 'pids.current') <= pidsMax)
  } finally {
    await eventually(() => a.files.write('/tmp/escape-stop', 'stop'), 20_000).catch(() => {}) // else its 30 s run out
    await eventually(() => a.files.getInfo('/tmp/escape-reaped'), 60_000)
  }
  const alive = await eventually(() => a.commands.run('echo alive', { timeoutMs: 10_000 }), 30_000)
  assert.equal(alive.stdout, 'alive\n', 'the sandbox recovers once the bomb is gone')
  assert.ok(cgroupNumber('pids', 'pids.current') < 100)
})

hostTest('a memory hog is OOM-killed inside its own sandbox; the neighbour runs on', async () => {
  assert.equal(cgroupNumber('memory', 'memory.limit_in_bytes'), MEMORY_MB * 1024 * 1024)
  const killsBefore = Number(read(cgroupFile('memory', 'memory.oom_control')).match(/oom_kill (\d+)/)[1])
  await a.files.write('/tmp/escape-hog.py',
    `chunks = [bytearray(b'x' * (16 << 20)) for _ in range(${(2 * MEMORY_MB) / 16})]\nprint('survived')\n`)
  const hog = await a.commands.run('python3 /tmp/escape-hog.py', { timeoutMs: 60_000 })
    .catch((e) => (e instanceof CommandExitError ? e : Promise.reject(e)))
  assert.equal(hog.exitCode, 137, `the hog was SIGKILLed: ${hog.stdout}`)
  const oom = read(cgroupFile('memory', 'memory.oom_control'))
  assert.ok(Number(oom.match(/oom_kill (\d+)/)[1]) > killsBefore, `A's own OOM killer acted: ${oom}`)
  assert.ok(cgroupNumber('memory', 'memory.max_usage_in_bytes') <= MEMORY_MB * 1024 * 1024)
  assert.equal((await a.commands.run('echo alive')).stdout, 'alive\n', "A's envd survived")
  await assertNeighbourAndServerWork()
})

hostTest("filling the disk stops at the sandbox's own disk size", async () => {
  try {
    const fill = await a.commands.run('fallocate -l 2G /home/user/escape-fill', { timeoutMs: 30_000 })
      .catch((e) => (e instanceof CommandExitError ? e : Promise.reject(e)))
    assert.match(fill.stderr, /No space left on device/)
    await a.commands.run('rm -f /home/user/escape-fill') // a refused fallocate may leave what it got
    const df = await a.commands.run('df -B1M --output=avail / | tail -n 1')
    await a.commands.run(`fallocate -l ${Number(df.stdout.trim()) - 8}M /home/user/escape-fill`)
    const dd = await a.commands.run('dd if=/dev/zero of=/home/user/escape-more bs=1M count=64 2>&1 || true')
    assert.match(dd.stdout, /No space left on device/)
    // /run/envd, the one writable dir bound in from the host, is on the same disk
    const envdDir = await a.commands.run('sudo dd if=/dev/zero of=/run/envd/escape-more bs=1M count=64 2>&1 || true')
    assert.match(envdDir.stdout, /No space left on device/)
    const image = join(server.dataDir, 'backend', 'container', 'sandboxes', cgroupOfA.split('/').pop(), 'disk.img')
    const { size, blocks } = statSync(image)
    assert.equal(size, DISK_MB * 1024 * 1024, "the host file of A's disk keeps its size")
    assert.ok(blocks * 512 <= size + (1 << 20), `A's disk holds ${blocks * 512} bytes of the host's disk`)
    await b.files.write('/home/user/escape-fits', 'B still writes\n')
    await assertNeighbourAndServerWork()
  } finally {
    await a.commands.run('rm -f /home/user/escape-fill /home/user/escape-more')
    await a.commands.run('sudo rm -f /run/envd/escape-more')
  }
})

hostTest("a CPU hog on every core leaves the neighbour's commands answering", async () => {
  const usage = () => cgroupNumber('cpuacct', 'cpuacct.usage') // ns of CPU A used
  const usageBefore = usage()
  await a.commands.run('for i in $(seq $(nproc)); do nohup timeout 60 yes >/dev/null 2>&1 & done')
  try {
    await eventually(() => assert.ok(usage() - usageBefore > 1e9, 'the hog has used a second of CPU'), 20_000)
    const usageBusy = usage()
    const latencies = []
    for (let i = 0; i < 5; i++) {
      const started = performance.now()
      await b.commands.run('true', { timeoutMs: 10_000 })
      latencies.push(performance.now() - started)
    }
    // a generous bound: a starved neighbour would take tens of seconds or time out
    assert.ok(latencies.every((ms) => ms < 5_000), `B's commands took ${latencies.map(Math.round)} ms`)
    await assertNeighbourAndServerWork()
    assert.ok(usage() > usageBusy, 'the hog ran on meanwhile')
  } finally {
    await a.commands.run('pkill -x yes || true')
  }
})

hostTest('descriptor exhaustion hits RLIMIT_NOFILE and envd keeps answering', async () => {
  assertRefused(['raise RLIMIT_NOFILE past its hard limit'], ['EPERM'])
  for (const [who, result] of Object.entries(outcomes('open descriptors until refused'))) {
    assert.equal(result.outcome, 'EMFILE', `${who}: ${JSON.stringify(result)}`)
    assert.ok(result.opened < result.limit && result.limit <= 16384, `${who}: ${JSON.stringify(result)}`)
  }
  assert.equal((await a.commands.run('echo alive')).stdout, 'alive\n')
})

// inotify instances made until refused, then held (the kernel counts them per user namespace and uid)
const INOTIFY_COUNT = (hold) => `python3 -c "
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True); n = 0
while n < 1000 and libc.inotify_init1(0) >= 0:
    n += 1
print(n, ctypes.get_errno(), flush=True)
time.sleep(${hold})"`

hostTest('inotify instances held in one sandbox leave others and the host theirs', async () => {
  const held = await a.commands.run(`${INOTIFY_COUNT(120)} > /tmp/inotify-held`, { user: 'root', background: true })
  try {
    await waitFor(async () => (await a.commands.run('cat /tmp/inotify-held')).stdout.trim() !== '',
      { what: 'A holds its inotify instances' })
    // refused with EMFILE (24) at the sandbox's own limit of 128 per uid (less what its processes hold already), far
    // below the host's
    const [heldInA, errnoInA] = (await a.commands.run('cat /tmp/inotify-held')).stdout.trim().split(' ').map(Number)
    assert.ok(heldInA > 64 && heldInA <= 128 && errnoInA === 24, `A's root made ${heldInA}, then errno ${errnoInA}`)
    for (const user of ['root', 'user']) {
      const [inB, errnoInB] = (await b.commands.run(INOTIFY_COUNT(0), { user })).stdout.trim().split(' ').map(Number)
      assert.ok(inB > 64 && inB <= 128 && errnoInB === 24, `B's ${user} still has its own: ${inB}, then ${errnoInB}`)
    }
    const onHost = execFileSync('python3', ['-c',
      'import ctypes; libc = ctypes.CDLL(None); print(sum(libc.inotify_init1(0) >= 0 for _ in range(200)))']).toString()
    assert.equal(onHost.trim(), '200', "the host's root is not held back by A")
  } finally {
    await held.kill()
  }
})

hostTest('the file API resolves .. and symlinks inside the sandbox, not the host', async () => {
  await a.commands.run(`ln -sfn / /home/user/escape-root && ln -sfn /proc/1/root /home/user/escape-proc-root && ` +
    `ln -sfn ${marker.path} /home/user/escape-marker && ln -sfn ${server.dataDir} /home/user/escape-data`)
  const ownShadow = (await a.commands.run('cat /etc/shadow', { user: 'root' })).stdout
  assert.notEqual(ownShadow, read('/etc/shadow'))
  const ownHostname = (await a.commands.run('cat /etc/hostname')).stdout
  for (const path of ['../../etc/hostname', '../../../../../../etc/hostname', '/home/user/escape-root/etc/hostname',
    '/home/user/escape-proc-root/etc/hostname', '/proc/1/root/etc/hostname', '/proc/self/root/etc/hostname']) {
    assert.equal(await a.files.read(path, { user: 'root' }), ownHostname, path)
  }
  assert.equal(await a.files.read('../../etc/shadow', { user: 'root' }), ownShadow)
  for (const path of [marker.path, `../../../..${marker.path}`, '/home/user/escape-marker',
    `/home/user/escape-root${marker.path}`, `/proc/1/root${marker.path}`, `${server.dataDir}/agentenv.db`]) {
    await assert.rejects(a.files.read(path, { user: 'root' }), NotFoundError, path)
  }
  await assert.rejects(a.files.list('/home/user/escape-data', { user: 'root' }), NotFoundError)

  // writes through the same paths land in the sandbox
  await a.files.write(`../../../..${marker.path}`, 'written from a sandbox', { user: 'root' })
  await a.files.write('/home/user/escape-marker', 'written through a symlink', { user: 'root' })
  await a.files.write(`${server.dataDir}/escape-written`, 'written into the data dir?', { user: 'root' })
  assert.equal((await a.commands.run(`cat ${marker.path}`)).stdout, 'written through a symlink')
  assert.equal((await a.commands.run(`cat ${server.dataDir}/escape-written`)).stdout, 'written into the data dir?')
  assert.deepEqual(hostState().marker, hostBefore.marker, 'the host marker is untouched')
  assert.ok(!existsSync(join(server.dataDir, 'escape-written')), "nothing reached the server's data dir")
})

hostTest('signed download and upload URLs stay inside the sandbox filesystem', async () => {
  const ownHostname = (await a.commands.run('cat /etc/hostname')).stdout
  for (const path of ['../../etc/hostname', '/home/user/escape-proc-root/etc/hostname', '/proc/1/root/etc/hostname']) {
    const res = await fetch(await a.downloadUrl(path, { user: 'root' }))
    assert.equal(res.status, 200, path)
    assert.equal(await res.text(), ownHostname, path)
  }
  await a.commands.run(`rm -f ${marker.path}`, { user: 'root' })
  for (const path of [marker.path, `/home/user/escape-root${marker.path}`]) {
    const res = await fetch(await a.downloadUrl(path, { user: 'root' }))
    assert.equal(res.status, 404, path)
    assert.doesNotMatch(await res.text(), new RegExp(marker.content.trim()))
  }
  for (const path of [marker.path, `/home/user/escape-root${marker.path}`, `${server.dataDir}/escape-uploaded`]) {
    const form = new FormData()
    form.append('file', new Blob(['uploaded from a sandbox']), 'escape')
    const res = await fetch(await a.uploadUrl(path, { user: 'root' }), { method: 'POST', body: form })
    assert.equal(res.status, 200, path)
  }
  assert.equal((await a.commands.run(`cat ${marker.path}`)).stdout, 'uploaded from a sandbox')
  assert.equal((await a.commands.run(`cat ${server.dataDir}/escape-uploaded`)).stdout, 'uploaded from a sandbox')
  assert.deepEqual(hostState().marker, hostBefore.marker, 'the host marker is untouched')
  assert.ok(!existsSync(join(server.dataDir, 'escape-uploaded')), "nothing reached the server's data dir")
})

hostTest('afterwards the host, its kernel settings and sandbox B are untouched', async () => {
  assert.deepEqual(hostState(), hostBefore)
  await assertNeighbourAndServerWork()
  assert.equal((await a.commands.run('echo alive')).stdout, 'alive\n', 'A itself still works')
})
