package io.agentenv.backend.container;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * The backend's packages depend one way: the factory on everything; {@code lifecycle} on the parts below it;
 * {@code leftovers} on what it removes; {@code runtime} on {@code guest}, {@code storage} and {@code host};
 * {@code guest} on {@code storage} and {@code host}; {@code storage} and {@code network} on {@code host} and
 * {@code pool}; {@code host} and {@code pool} on nothing of the backend.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PackageDependenciesTest {
    private static final String BACKEND = "io.agentenv.backend.container";
    private static final JavaClasses PRODUCTION = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(BACKEND);

    @Test
    void no_cycles_between_the_packages() {
        slices().matching(BACKEND + ".(*)..").should().beFreeOfCycles().check(PRODUCTION);
    }

    @Test
    void low_level_packages_never_depend_on_high_level_ones() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("factory")
                .definedBy(BACKEND)
                .layer("lifecycle")
                .definedBy(BACKEND + ".lifecycle..")
                .layer("leftovers")
                .definedBy(BACKEND + ".leftovers..")
                .layer("runtime")
                .definedBy(BACKEND + ".runtime..")
                .layer("network")
                .definedBy(BACKEND + ".network..")
                .layer("guest")
                .definedBy(BACKEND + ".guest..")
                .layer("storage")
                .definedBy(BACKEND + ".storage..")
                .layer("host")
                .definedBy(BACKEND + ".host..")
                .layer("pool")
                .definedBy(BACKEND + ".pool..")
                .whereLayer("factory")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("lifecycle")
                .mayOnlyBeAccessedByLayers("factory")
                .whereLayer("leftovers")
                .mayOnlyBeAccessedByLayers("factory", "lifecycle")
                .whereLayer("runtime")
                .mayOnlyBeAccessedByLayers("factory", "lifecycle", "leftovers")
                .whereLayer("network")
                .mayOnlyBeAccessedByLayers("factory", "lifecycle", "leftovers")
                .whereLayer("guest")
                .mayOnlyBeAccessedByLayers("factory", "lifecycle", "leftovers", "runtime")
                .whereLayer("storage")
                .mayOnlyBeAccessedByLayers("factory", "lifecycle", "leftovers", "runtime", "guest")
                .whereLayer("host")
                .mayOnlyBeAccessedByLayers(
                        "factory", "lifecycle", "leftovers", "runtime", "guest", "storage", "network")
                .whereLayer("pool")
                .mayOnlyBeAccessedByLayers(
                        "factory", "lifecycle", "leftovers", "runtime", "guest", "storage", "network", "host")
                .check(PRODUCTION);
    }
}
