// Writes <dir>/assets.txt: every built file's path relative to <dir>, one a line, sorted. The server serves exactly
// the files listed there (agentenv-server's ConsoleAssets), so nothing else on the class path is reachable.
import { readdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const dir = process.argv[2]
if (!dir) throw new Error('usage: list-assets.mjs DIR')
const files = []
const walk = (d) => {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = join(d, e.name)
    if (e.isDirectory()) walk(p)
    else if (e.name !== 'assets.txt' && !e.name.endsWith('.map')) files.push(relative(dir, p).split('\\').join('/'))
  }
}
walk(dir)
writeFileSync(join(dir, 'assets.txt'), files.sort().join('\n') + '\n')
