// CPU per server log line on the calling thread, in two parts per round: (1) `lines` INFO events shaped like the
// launcher's "sandbox started" line (SLF4J key-value pairs: sandbox id, template, three timings) through the server's
// logback.xml (the one in the jar, or -Dlogback.configurationFile=<file> to compare a pattern) to stderr, which the
// caller sends to /dev/null; consecutive events of a tight loop share milliseconds, so logback formats their date
// less often than a burst does; (2) the date alone, through logback's DateConverter with the pattern's format, each
// event 1 ms after the one before (a new string every time, as in a burst where no two creates log in the same ms).
//   source scripts/lib/env.sh
//   java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp 'agentenv-server/target/agentenv-server.jar:agentenv-server/target/lib/*' \
//       bench/store/LogLineCost.java [lines=200000] 2>/dev/null
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.pattern.DateConverter;
import ch.qos.logback.classic.spi.LoggingEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.util.List;

public class LogLineCost {
    public static void main(String[] args) {
        int lines = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        Logger log = LoggerFactory.getLogger("Launcher");
        var cpu = ManagementFactory.getThreadMXBean();
        DateConverter date = new DateConverter();
        date.setOptionList(List.of("yyyy-MM-dd'T'HH:mm:ss.SSSX", "UTC"));
        date.setContext((LoggerContext) LoggerFactory.getILoggerFactory());
        date.start();
        LoggingEvent event = new LoggingEvent();
        long base = System.currentTimeMillis();
        for (int round = 0; round < 4; round++) {
            long t0 = cpu.getCurrentThreadCpuTime();
            for (int i = 0; i < lines; i++) {
                log.atInfo().addKeyValue("sandbox_id", "i" + Integer.toHexString(i)).addKeyValue("template", "base")
                        .addKeyValue("took_ms", i & 63).addKeyValue("start_ms", i & 31).addKeyValue("store_ms", i & 7)
                        .log("sandbox started");
            }
            long t1 = cpu.getCurrentThreadCpuTime();
            int length = 0;
            for (int i = 0; i < lines; i++) {
                event.setTimeStamp(base + round * (long) lines + i);
                length += date.convert(event).length();
            }
            long t2 = cpu.getCurrentThreadCpuTime();
            System.out.printf("round %d: %.2f us per line (whole event to the appender), %.2f us per date formatted"
                    + " (%d chars)%n", round, (t1 - t0) / 1e3 / lines, (t2 - t1) / 1e3 / lines, length / lines);
        }
    }
}
