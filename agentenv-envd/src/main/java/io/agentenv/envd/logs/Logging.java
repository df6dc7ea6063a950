package io.agentenv.envd.logs;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.core.ConsoleAppender;
import org.slf4j.LoggerFactory;

/** Configures logback in code (no XML parsing at start-up): key-value lines on stderr, plus the journal. */
public final class Logging {
    private Logging() {}

    public static void configure(LogJournal journal, Level level, String sandboxId) {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();
        context.putProperty("sandbox_id", sandboxId);

        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSX,UTC} %-5level %logger{0} sandbox_id=%property{sandbox_id} %msg %kvp%n");
        encoder.start();

        ConsoleAppender<ch.qos.logback.classic.spi.ILoggingEvent> console = new ConsoleAppender<>();
        console.setContext(context);
        console.setName("stderr");
        console.setTarget("System.err");
        console.setEncoder(encoder);
        console.start();

        JournalAppender journalAppender = new JournalAppender(journal);
        journalAppender.setContext(context);
        journalAppender.setName("journal");
        journalAppender.start();

        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(level);
        root.addAppender(console);
        root.addAppender(journalAppender);
        context.getLogger("org.eclipse.jetty").setLevel(Level.WARN);
    }
}
