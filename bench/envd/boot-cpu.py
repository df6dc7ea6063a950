#!/usr/bin/env python3
"""CPU time (user + system, from wait4: microsecond resolution, insensitive to other load) of an envd JVM that boots
with a build's jvm.options and AOT cache and exits at once (`--help`): the cost of "Create VM" (mapping the AOT cache,
preloading and linking its classes) plus the launcher and exit, without serving anything. Builds alternate (A B A B).

    python3 bench/envd/boot-cpu.py [--runs N] BUILD_DIR [BUILD_DIR...]

BUILD_DIR holds agentenv-envd.jar, jvm.options and envd.aot (agentenv-envd/target after `mvn package`).
"""
import argparse
import os
import statistics
import subprocess
import time

parser = argparse.ArgumentParser()
parser.add_argument('--runs', type=int, default=15)
parser.add_argument('builds', nargs='+')
args = parser.parse_args()
java = os.path.join(os.environ.get('JAVA_HOME', '/usr/lib/jvm/temurin-25-jdk-amd64'), 'bin', 'java')

cpu = {b: [] for b in args.builds}
wall = {b: [] for b in args.builds}
for _ in range(args.runs):
    for build in args.builds:
        with open(os.path.join(build, 'jvm.options')) as f:
            options = [line.strip() for line in f if line.strip() and not line.startswith('#')]
        command = [java, *options, '-XX:AOTCache=' + os.path.join(build, 'envd.aot'),
                   '-jar', os.path.join(build, 'agentenv-envd.jar'), '--help']
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall[build].append((time.perf_counter() - started) * 1000)
        if status != 0:
            raise SystemExit(f'{build}: java exited with status {status}')
        cpu[build].append((usage.ru_utime + usage.ru_stime) * 1000)

print(f'load average {os.getloadavg()[0]:.2f}, {args.runs} runs per build')
for build in args.builds:
    c = sorted(cpu[build])
    print(f'{build}: CPU ms min / median / max {c[0]:.1f} / {statistics.median(c):.1f} / {c[-1]:.1f}; '
          f'wall median {statistics.median(wall[build]):.1f}')
