// What /proc says about a process, for benchmarks.
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
