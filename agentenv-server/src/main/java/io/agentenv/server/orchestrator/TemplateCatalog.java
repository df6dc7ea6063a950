package io.agentenv.server.orchestrator;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateDescriptor;
import io.agentenv.spi.TemplateId;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/** Resolves what a create names: a backend's built-in template, else a snapshot by id or alias. */
final class TemplateCatalog {
    /**
     * What a sandbox is launched from, with the name the client used, the environment and the custom extension params
     * (raw JSON object, {@code "{}"} for a built-in template) it inherits.
     */
    record Resolved(TemplateId template, Optional<String> alias, LaunchSource source, Map<String, String> envVars,
                    Resources resources, String customExtensionParams) {
    }

    private final SandboxBackendFactory backends;
    private final SandboxStore store;

    TemplateCatalog(SandboxBackendFactory backends, SandboxStore store) {
        this.backends = requireNonNull(backends, "backends is null");
        this.store = requireNonNull(store, "store is null");
    }

    Optional<TemplateDescriptor> builtIn(String name) {
        return backends.templates().stream().filter(t -> t.id().value().equals(name)).findFirst();
    }

    Resolved resolve(String reference) {
        Optional<TemplateDescriptor> builtIn = builtIn(reference);
        if (builtIn.isPresent()) {
            TemplateDescriptor template = builtIn.get();
            return new Resolved(template.id(), Optional.of(reference), new LaunchSource.Template(template.id()), Map.of(),
                    template.resources(), CustomExtensionParams.EMPTY);
        }
        SnapshotRecord snapshot = store.findSnapshot(reference)
                .orElseThrow(() -> AgentEnvException.invalidArgument("template " + printable(reference) + " not found"));
        SnapshotState state;
        try {
            state = backends.decodeSnapshotState(snapshot.state().encoded(), snapshot.state().artifactDir());
        } catch (BackendException e) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "snapshot " + snapshot.id() + " cannot be restored", e);
        }
        Optional<String> alias = reference.equals(snapshot.id().value()) ? Optional.empty() : Optional.of(reference);
        return new Resolved(snapshot.id(), alias, new LaunchSource.Snapshot(state), snapshot.envVars(), state.resources(),
                snapshot.customExtensionParams());
    }

    static Map<String, String> merged(Map<String, String> base, Map<String, String> overrides) {
        Map<String, String> env = new HashMap<>(base);
        env.putAll(overrides);
        return env;
    }

    private static String printable(String text) {
        String shortened = text.length() > 128 ? text.substring(0, 128) + "..." : text;
        return shortened.replaceAll("\\p{Cntrl}", "?");
    }
}
