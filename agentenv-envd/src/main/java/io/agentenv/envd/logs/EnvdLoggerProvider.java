package io.agentenv.envd.logs;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.AbstractLogger;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.LoggingEventAware;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/** envd's SLF4J 2 provider (found through {@code META-INF/services}); see {@link Logging} for why it exists. */
public final class EnvdLoggerProvider implements SLF4JServiceProvider {
    private final ConcurrentMap<String, Logger> loggers = new ConcurrentHashMap<>();
    private final ILoggerFactory factory = name -> loggers.computeIfAbsent(name, EnvdLogger::new);
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
        // nothing: the sink starts as WARN on stderr until Logging.configure
    }

    /** Formats like SLF4J ({} placeholders) and passes fluent-API key-value pairs through. */
    static final class EnvdLogger extends AbstractLogger implements LoggingEventAware {
        /** Libraries (Jetty, pty4j) log at WARN and above whatever envd's own level is. */
        private final Level floor;

        EnvdLogger(String name) {
            this.name = name;
            this.floor = name.startsWith("io.agentenv.") ? Level.TRACE : Level.WARN;
        }

        private boolean on(Level level) {
            return level.toInt() >= floor.toInt() && Logging.sink().enabled(level);
        }

        @Override
        public boolean isTraceEnabled() {
            return on(Level.TRACE);
        }

        @Override
        public boolean isTraceEnabled(Marker marker) {
            return on(Level.TRACE);
        }

        @Override
        public boolean isDebugEnabled() {
            return on(Level.DEBUG);
        }

        @Override
        public boolean isDebugEnabled(Marker marker) {
            return on(Level.DEBUG);
        }

        @Override
        public boolean isInfoEnabled() {
            return on(Level.INFO);
        }

        @Override
        public boolean isInfoEnabled(Marker marker) {
            return on(Level.INFO);
        }

        @Override
        public boolean isWarnEnabled() {
            return on(Level.WARN);
        }

        @Override
        public boolean isWarnEnabled(Marker marker) {
            return on(Level.WARN);
        }

        @Override
        public boolean isErrorEnabled() {
            return on(Level.ERROR);
        }

        @Override
        public boolean isErrorEnabled(Marker marker) {
            return on(Level.ERROR);
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(
                Level level, Marker marker, String pattern, Object[] arguments, Throwable error) {
            Logging.Sink sink = Logging.sink();
            if (on(level)) {
                sink.write(name, level, MessageFormatter.basicArrayFormat(pattern, arguments), null, error);
            }
        }

        @Override
        public void log(LoggingEvent event) {
            Logging.Sink sink = Logging.sink();
            if (on(event.getLevel())) {
                String message = MessageFormatter.basicArrayFormat(event.getMessage(), event.getArgumentArray());
                sink.write(name, event.getLevel(), message, event.getKeyValuePairs(), event.getThrowable());
            }
        }
    }
}
