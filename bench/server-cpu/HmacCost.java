// CPU per sandbox token (HMAC-SHA256 of the id, hex), as SandboxTokens used to derive it (Mac.getInstance +
// init per call) and now (a clone of one keyed Mac), on the calling thread's CPU clock. Run with the server's JIT:
//   source scripts/lib/env.sh && java -XX:TieredStopAtLevel=1 bench/server-cpu/HmacCost.java
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

public class HmacCost {
    public static void main(String[] args) throws Exception {
        var key = new SecretKeySpec("seed-seed-seed-seed".getBytes(StandardCharsets.UTF_8), "HmacSHA256");
        Mac prototype = Mac.getInstance("HmacSHA256");
        prototype.init(key);
        var cpu = ManagementFactory.getThreadMXBean();
        int n = 20_000;
        for (int round = 0; round < 4; round++) {
            long t0 = cpu.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(key);
                HexFormat.of().formatHex(mac.doFinal(("sbx" + i).getBytes(StandardCharsets.UTF_8)));
            }
            long t1 = cpu.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                Mac mac = (Mac) prototype.clone();
                HexFormat.of().formatHex(mac.doFinal(("sbx" + i).getBytes(StandardCharsets.UTF_8)));
            }
            long t2 = cpu.getCurrentThreadCpuTime();
            System.out.printf("round %d: getInstance + init %.2f us, clone %.2f us per token%n", round,
                    (t1 - t0) / 1e3 / n, (t2 - t1) / 1e3 / n);
        }
    }
}
