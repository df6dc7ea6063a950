package io.agentenv.envd.logs;

import java.text.MessageFormat;
import java.util.ResourceBundle;
import java.util.function.Supplier;

/**
 * The JDK's {@link System.LoggerFinder} inside envd (registered in {@code META-INF/services} of envd's own jar): the
 * JDK's platform loggers ({@code jdk.httpserver}'s among them) write to envd's sink at WARN and above, like the
 * libraries' SLF4J loggers. It also keeps a class-path scan off envd's path to listening: without a finder in the first
 * jar of the class path, the first platform logger makes the JDK open every jar of the class path to look for one.
 */
public final class JdkLoggerFinder extends System.LoggerFinder {
    @Override
    public System.Logger getLogger(String name, Module module) {
        return new JdkLogger(name);
    }

    /** A platform logger writing to {@link Logging}'s sink at WARN and above. */
    record JdkLogger(String name) implements System.Logger {
        @Override
        public String getName() {
            return name;
        }

        @Override
        public boolean isLoggable(System.Logger.Level level) {
            org.slf4j.event.Level mapped = map(level);
            return mapped != null
                    && mapped.toInt() >= org.slf4j.event.Level.WARN.toInt()
                    && Logging.sink().enabled(mapped);
        }

        @Override
        public void log(System.Logger.Level level, ResourceBundle bundle, String message, Throwable thrown) {
            if (isLoggable(level)) {
                Logging.sink().write(name, map(level), String.valueOf(message), null, thrown);
            }
        }

        @Override
        public void log(System.Logger.Level level, ResourceBundle bundle, String format, Object... params) {
            if (isLoggable(level)) {
                String message = params == null || params.length == 0 ? format : MessageFormat.format(format, params);
                Logging.sink().write(name, map(level), String.valueOf(message), null, null);
            }
        }

        @Override
        public void log(System.Logger.Level level, Supplier<String> message, Throwable thrown) {
            if (isLoggable(level)) {
                Logging.sink().write(name, map(level), String.valueOf(message.get()), null, thrown);
            }
        }

        /** The SLF4J level of a platform level; null for OFF (never logged). */
        private static org.slf4j.event.Level map(System.Logger.Level level) {
            return switch (level) {
                case ALL, TRACE -> org.slf4j.event.Level.TRACE;
                case DEBUG -> org.slf4j.event.Level.DEBUG;
                case INFO -> org.slf4j.event.Level.INFO;
                case WARNING -> org.slf4j.event.Level.WARN;
                case ERROR -> org.slf4j.event.Level.ERROR;
                case OFF -> null;
            };
        }
    }
}
