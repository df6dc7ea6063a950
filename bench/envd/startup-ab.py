#!/usr/bin/env python3
"""A/B of envd start-up: builds (and JVM options) started in turn, A B A B ..., so that a changing machine load hits
them alike; each start timed by ready-probe.py (start -> first GET /health 204, -> first Start answered) with the CPU
time of envd's threads at the 204 (schedstat: load-insensitive evidence).

    python3 bench/envd/startup-ab.py [--runs N] [--rt] CONFIG [CONFIG...]

CONFIG is BUILD_DIR[:JVM_OPTION,JVM_OPTION...], BUILD_DIR holding agentenv-envd.jar, jvm.options and envd.aot
(agentenv-envd/target after `mvn package`; for a copy, copy those files). Options after ':' are added after jvm.options
(-XX:AOTMode=off: without the cache). --rt: envd under `chrt -r 10`, the probe at real-time priority 20 above it (other
work on the machine cannot take envd's cores; SCHED_RR also ignores the compiler thread's nice 10 and lets envd's threads
run until they block, so RT numbers compare builds, not what a quiet machine at normal priority gives). Binds a
kernel-chosen port, not 49983.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument('--runs', type=int, default=10)
parser.add_argument('--rt', action='store_true')
parser.add_argument('configs', nargs='+')
args = parser.parse_args()
java = os.path.join(os.environ.get('JAVA_HOME', '/usr/lib/jvm/temurin-25-jdk-amd64'), 'bin', 'java')
probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ready-probe.py')
if args.rt:
    os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(20))  # inherited by the probe


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def once(config):
    build, _, extra = config.partition(':')
    extra = [e for e in extra.split(',') if e]
    with open(os.path.join(build, 'jvm.options')) as f:
        options = [line.strip() for line in f if line.strip() and not line.startswith('#')]
    cache = os.path.join(build, 'envd.aot')
    aot = [f'-XX:AOTCache={cache}'] if os.path.exists(cache) and '-XX:AOTMode=off' not in extra else []
    port = free_port()
    command = (['chrt', '-r', '10'] if args.rt else []) + [
        java, *options, *aot, *extra, '-jar', os.path.join(build, 'agentenv-envd.jar'),
        '--port', str(port), '--log-level', 'WARN']
    with subprocess.Popen([sys.executable, probe, '--port', str(port), '--', *command],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as p:
        ready = json.loads(p.stdout.readline())
        if ready['event'] != 'ready':
            raise SystemExit(f'{config}: envd exited with status {ready.get("status")}')
        first = json.loads(p.stdout.readline())
        if not first['ok']:
            raise SystemExit(f'{config}: the first Start did not end with exit code 0')
        os.kill(ready['pid'], signal.SIGTERM)
        p.wait()
    threads = ready['threadsCpuMs']
    return {'204': ready['readyMs'], 'first Start': first['firstStartMs'], 'envd CPU': ready['envdCpuMs'],
            'main thread': threads.get('java', 0), 'C1': threads.get('C1 CompilerThre', 0),
            'carriers': threads.get('ForkJoinPool-1-', 0), 'probe CPU': ready['probeCpuMs']}


results = {c: [] for c in args.configs}
for _ in range(args.runs):
    for config in args.configs:
        results[config].append(once(config))
print(f'load average {os.getloadavg()[0]:.2f}, {args.runs} starts per config, {"RT" if args.rt else "normal priority"}; '
      'ms, min / median / max (CPU: at the 204)')
for config, rows in results.items():
    print(config)
    for key in rows[0]:
        values = sorted(r[key] for r in rows)
        print(f'  {key:12} {values[0]:7.1f} / {statistics.median(values):7.1f} / {values[-1]:7.1f}')
