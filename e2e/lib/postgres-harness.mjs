// Starts a private PostgreSQL 15 (Debian's package) for cluster tests and benchmarks, and stops it again.
//
//   const pg = await startPostgres()
//   ... AENV_CLUSTER_DATABASE_URL = pg.jdbcUrl, AENV_CLUSTER_DATABASE_USER = pg.user ...
//   await pg.stop()              // fast shutdown, removes its directory
//
// Runs as root: initdb and pg_ctl run as the `postgres` user (PostgreSQL refuses root) on a fresh temp directory it
// owns, listening on 127.0.0.1 at a free port and a unix socket in that directory, with trust authentication for
// the role `agentenv` (loopback only, a throw-away database). Nothing of the host's own PostgreSQL is touched.
import { execFileSync } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './control-plane-harness.mjs'

const BIN = '/usr/lib/postgresql/15/bin'

export async function startPostgres() {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
  const dir = mkdtempSync(join(tmpdir(), 'aenv-postgres-'))
  chownSync(dir, uid, gid)
  const data = join(dir, 'data')
  const port = await freePort()
  const asPostgres = (program, args) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, program), ...args], { stdio: 'pipe' })
  try {
    asPostgres('initdb', ['-D', data, '-U', 'agentenv', '--auth=trust', '-E', 'UTF8'])
    asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start'])
    asPostgres('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'agentenv', 'agentenv'])
  } catch (e) {
    try { asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']) } catch { /* never started */ }
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`PostgreSQL did not start: ${e.stderr ?? e.message}`)
  }
  return {
    port,
    user: 'agentenv',
    jdbcUrl: `jdbc:postgresql://127.0.0.1:${port}/agentenv`,
    async stop() {
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}
