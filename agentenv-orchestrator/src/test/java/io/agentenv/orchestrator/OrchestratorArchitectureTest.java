package io.agentenv.orchestrator;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.time.Duration;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * What the module graph cannot check. The pom already keeps Jetty, Jackson, the SQLite driver, the API model and the
 * server's packages off the orchestrator's compile classpath (and the enforcer keeps it that way); the JDK's own JDBC
 * API is always there, and a test's sleep compiles anywhere.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OrchestratorArchitectureTest {
    private static final JavaClasses PRODUCTION = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.agentenv.orchestrator");
    private static final JavaClasses TESTS = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
            .importPackages("io.agentenv.orchestrator");

    @Test
    void the_orchestrator_never_uses_jdbc() {
        noClasses()
                .that()
                .resideInAPackage("io.agentenv.orchestrator..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("java.sql..", "javax.sql..")
                .check(PRODUCTION);
    }

    @Test
    void orchestrator_tests_never_sleep() {
        noClasses()
                .should()
                .callMethod(Thread.class, "sleep", long.class)
                .orShould()
                .callMethod(Thread.class, "sleep", Duration.class)
                .orShould()
                .callMethod(Thread.class, "sleep", long.class, int.class)
                .check(TESTS);
    }
}
