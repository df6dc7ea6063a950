// CPU of the /proc reads a warm claim's liveness set-up used to make to find the container's init and envd (7 stat,
// 2 task children, 2 comm reads; the pool now makes them when a member is ready, off the create path), on the
// calling thread's CPU clock; this JVM's own files stand in for the container's. Run compiled (the server's JIT)
// and interpreted (how a burst ran the claim path):
//   source scripts/lib/env.sh && java -XX:TieredStopAtLevel=1 bench/server-cpu/ProcCost.java && java -Xint bench/server-cpu/ProcCost.java
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

public class ProcCost {
    public static void main(String[] args) throws Exception {
        long pid = ProcessHandle.current().pid();
        var cpu = ManagementFactory.getThreadMXBean();
        int n = 5_000;
        for (int round = 0; round < 4; round++) {
            long t0 = cpu.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < 7; k++) {
                    Files.readString(Path.of("/proc/" + pid + "/stat"));
                }
                for (int k = 0; k < 2; k++) {
                    Files.readString(Path.of("/proc/" + pid + "/task/" + pid + "/children"));
                    Files.readString(Path.of("/proc/" + pid + "/comm"));
                }
            }
            System.out.printf("round %d: %.1f us per look-up (11 reads)%n", round,
                    (cpu.getCurrentThreadCpuTime() - t0) / 1e3 / n);
        }
    }
}
