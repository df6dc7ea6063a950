package io.agentenv.envd.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ServiceLoader;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class JdkLoggerFinderTest {
    @Test
    void the_jdk_finds_envds_logger_finder_through_its_service_registration() {
        assertThat(ServiceLoader.load(System.LoggerFinder.class, ClassLoader.getSystemClassLoader())
                        .findFirst())
                .get()
                .isInstanceOf(JdkLoggerFinder.class);
    }

    @Test
    void platform_loggers_write_warnings_and_errors_only() {
        System.Logger logger = new JdkLoggerFinder().getLogger("com.sun.net.httpserver", Object.class.getModule());

        assertThat(logger.getName()).isEqualTo("com.sun.net.httpserver");
        assertThat(logger.isLoggable(System.Logger.Level.ERROR)).isTrue();
        assertThat(logger.isLoggable(System.Logger.Level.WARNING)).isTrue();
        assertThat(logger.isLoggable(System.Logger.Level.INFO)).isFalse();
        assertThat(logger.isLoggable(System.Logger.Level.DEBUG)).isFalse();
        assertThat(logger.isLoggable(System.Logger.Level.OFF)).isFalse();
    }
}
