package io.agentenv.store.sqlite;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.time.Duration;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** The store's tests wait on conditions, never on the clock (a sleep compiles anywhere, so this is a test). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class StoreTestsArchitectureTest {
    private static final JavaClasses TESTS = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
            .importPackages("io.agentenv.store.sqlite");

    @Test
    void store_tests_never_sleep() {
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
