// The gate of the e2e files that run real container sandboxes: they need root and a host prepared by
// scripts/setup-host.sh since this boot. Without them each such test is skipped with the reason, unless
// AENV_REQUIRE_HOST_TESTS=1 (CI as root), where a missing prerequisite fails the file instead.
import { test } from 'node:test'
import { existsSync } from 'node:fs'
import { basename } from 'node:path'
import { throughGateway, GATEWAY_SKIPS } from './container-suite.mjs'

function unreadyReason() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'not running as root'
  if (!existsSync('/run/agentenv/host-ready')) return 'scripts/setup-host.sh has not been run since this boot'
  // the server refuses to start without it; a dead daemon's mount fails the stat (ENOTCONN)
  if (!existsSync('/run/agentenv/lxcfs/proc/meminfo')) return 'LXCFS does not answer at /run/agentenv/lxcfs (scripts/setup-host.sh starts it)'
  return null
}

/** Why the test {@code name} of this suite does not apply through a gateway (AENV_E2E_THROUGH_GATEWAY=1), or null. */
const gatewayTestSkip = (name) => throughGateway ? GATEWAY_SKIPS[basename(process.argv[1] ?? '')]?.[name] ?? null : null

/** Why this host cannot run container sandboxes, or null when it can. */
export const unready = unreadyReason()
if (unready && process.env.AENV_REQUIRE_HOST_TESTS === '1') throw new Error(`host tests are required but ${unready}`)

/** A test that runs only where container sandboxes can run, and in the gateway mode only if it applies (180 s each). */
export const hostTest = (name, fn) => {
  const skip = unready ? `host test skipped: ${unready}`
    : gatewayTestSkip(name) ? `does not apply through a gateway: ${gatewayTestSkip(name)}` : false
  return test(name, { skip, timeout: 180_000 }, fn)
}
