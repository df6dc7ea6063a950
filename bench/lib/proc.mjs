// What /proc says about a process, for benchmarks.
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'

// CPU time per thread in ms (schedstat: nanoseconds on the CPU), summed per key; by default keyed by "tid name".
// Threads that end while they are read are left out.
export function threadCpuMs(pid, keyOf = (tid, name) => `${tid} ${name}`) {
  const threads = {}
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const ms = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
      const key = keyOf(tid, name)
      threads[key] = (threads[key] ?? 0) + ms
    } catch { /* the thread ended meanwhile */ }
  }
  return threads
}

/**
 * The envd of a container sandbox: the java process in a cgroup under `cgroupParent` whose UTS namespace's hostname is
 * `sandboxId` (a claimed warm-pool member's cgroup and container carry the member's name, not the sandbox's; the claim
 * sets the hostname). Throws when there is none.
 */
export function envdOfSandbox(sandboxId, cgroupParent) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (!stat.includes('(java)')) continue
      if (!readFileSync(`/proc/${entry}/cgroup`, 'utf8').includes(cgroupParent)) continue
      if (execFileSync('nsenter', ['-u', '-t', entry, 'hostname']).toString().trim() === sandboxId) return entry
    } catch { /* ended meanwhile, or not ours */ }
  }
  throw new Error(`no envd found for ${sandboxId}`)
}

/** The cgroup v1 `cpuacct.usage` file (ns) of the cgroup `pid` is in. */
export function cpuacctUsageFile(pid) {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes('cpuacct'))
  return `/sys/fs/cgroup/cpuacct${line.split(':')[2]}/cpuacct.usage`
}
