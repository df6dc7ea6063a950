package io.agentenv.spi;

/** What a sandbox really has: vCPUs, memory and root disk size in MiB. */
public record Resources(int cpuCount, int memoryMiB, int diskSizeMiB) {
    public Resources {
        if (cpuCount < 1) {
            throw new IllegalArgumentException("cpuCount must be >= 1: " + cpuCount);
        }
        if (memoryMiB < 1) {
            throw new IllegalArgumentException("memoryMiB must be >= 1: " + memoryMiB);
        }
        if (diskSizeMiB < 1) {
            throw new IllegalArgumentException("diskSizeMiB must be >= 1: " + diskSizeMiB);
        }
    }
}
