package io.agentenv.server.orchestrator;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** The orchestrator sees only the SPI and the JDK (plus the logging API); its tests never sleep. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OrchestratorArchitectureTest {
    private static final JavaClasses PRODUCTION = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.agentenv.server.orchestrator");
    private static final JavaClasses TESTS = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
            .importPackages("io.agentenv.server.orchestrator", "io.agentenv.server.store");

    @Test
    void the_orchestrator_depends_only_on_the_spi_the_jdk_and_the_logging_api() {
        classes().that().resideInAPackage("io.agentenv.server.orchestrator..")
                .should().onlyDependOnClassesThat().resideInAnyPackage(
                        "java..", "io.agentenv.spi..", "io.agentenv.server.orchestrator..", "org.slf4j..")
                .check(PRODUCTION);
    }

    @Test
    void the_orchestrator_never_sees_jetty_jackson_jdbc_or_its_sibling_packages() {
        noClasses().that().resideInAPackage("io.agentenv.server.orchestrator..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.eclipse.jetty..", "com.fasterxml.jackson..", "java.sql..", "io.agentenv.server.api..",
                        "io.agentenv.server.store..", "io.agentenv.server.credentials..", "io.agentenv.server.config..",
                        "io.agentenv.server.proxy..", "io.agentenv.server.extension..")
                .orShould().dependOnClassesThat().resideInAPackage("io.agentenv.server")
                .check(PRODUCTION);
    }

    @Test
    void orchestrator_and_store_tests_never_sleep() {
        noClasses().should().callMethod(Thread.class, "sleep", long.class)
                .orShould().callMethod(Thread.class, "sleep", Duration.class)
                .orShould().callMethod(Thread.class, "sleep", long.class, int.class)
                .check(TESTS);
    }
}
