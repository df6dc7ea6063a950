package io.agentenv.envd.logs;

import static java.util.Objects.requireNonNull;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.event.KeyValuePair;

/** Copies envd's log events (message plus key-value pairs) into the {@link LogJournal}. */
final class JournalAppender extends AppenderBase<ILoggingEvent> {
    private final LogJournal journal;

    JournalAppender(LogJournal journal) {
        this.journal = requireNonNull(journal, "journal is null");
    }

    @Override
    protected void append(ILoggingEvent event) {
        StringBuilder text = new StringBuilder(event.getFormattedMessage());
        if (event.getKeyValuePairs() != null) {
            for (KeyValuePair pair : event.getKeyValuePairs()) {
                text.append(' ').append(pair.key).append('=').append(pair.value);
            }
        }
        if (event.getThrowableProxy() != null) {
            text.append(" error=").append(event.getThrowableProxy().getClassName());
        }
        journal.envd(event.getLevel().toString(), event.getLoggerName(), text.toString());
    }
}
