package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.Reservation;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.util.Optional;

/**
 * POST /sandboxes: validate, resolve the template, launch. A create from a built-in template first asks the backend to
 * reserve a ready instance and then uses the id the backend gave that instance (its guest agent may have been
 * initialised for that id already); the reservation is closed once the launch is over, which gives the instance back
 * when the launch failed before the backend took it.
 */
final class CreateOperation {
    private final Launcher launcher;

    /** The user a sandbox runs as when neither its template nor its create names one. */
    private final String defaultUser;

    private final TemplateCatalog templates;
    private final SandboxBackendFactory backends;
    private final Ids ids;
    private final HookCalls hooks;
    private final EventBus events;
    private final Clock clock;

    CreateOperation(
            TemplateCatalog templates,
            SandboxBackendFactory backends,
            Ids ids,
            HookCalls hooks,
            EventBus events,
            Clock clock,
            Launcher launcher,
            String defaultUser) {
        this.defaultUser = requireNonNull(defaultUser, "defaultUser is null");
        this.templates = requireNonNull(templates, "templates is null");
        this.backends = requireNonNull(backends, "backends is null");
        this.ids = requireNonNull(ids, "ids is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.launcher = requireNonNull(launcher, "launcher is null");
    }

    /** Checks that need no I/O; run on the caller's thread so bad input fails fast. */
    static void validate(CreateSandbox request, boolean extensionConfigured) {
        NetworkRules.validate(request.network());
        if (!extensionConfigured) {
            CustomExtensionParams.requireEmptyWithoutExtension(request.customExtensionParams());
        }
    }

    SandboxView create(CreateSandbox request) {
        validate(request, hooks.enabled());
        TemplateCatalog.Resolved resolved = templates.resolve(request.template());
        Optional<Reservation> reservation = switch (resolved.source()) {
            case LaunchSource.Template(var template) -> backends.reserve(template);
            // a template build's sandbox starts from a cached layer or a base once: no snapshot is kept warm for it
            case LaunchSource.Snapshot(var state) ->
                request.metadata().containsKey(TemplateBuilder.BUILD_METADATA)
                        ? Optional.empty()
                        : backends.reserve(
                                resolved.template(),
                                state,
                                resolved.envVars(),
                                resolved.guestDefaults().user().orElse(defaultUser),
                                resolved.guestDefaults().workdir());
            case LaunchSource.Paused paused -> Optional.empty();
        };
        try {
            return create(request, resolved, reservation.map(Reservation::id).orElseGet(ids::newSandboxId));
        } finally {
            reservation.ifPresent(Reservation::close); // a no-op once prepare took the instance
        }
    }

    private SandboxView create(CreateSandbox request, TemplateCatalog.Resolved resolved, SandboxId id) {
        SandboxRecord creating = new SandboxRecord(
                id,
                resolved.template(),
                resolved.alias(),
                SandboxState.CREATING,
                clock.instant(),
                request.timeout(),
                Optional.empty(),
                request.onTimeout(),
                request.timeoutPauseMode(),
                request.autoResume(),
                request.secure(),
                resolved.resources(),
                request.metadata(),
                TemplateCatalog.merged(resolved.envVars(), request.envVars()),
                request.network(),
                params(request.customExtensionParams(), resolved.customExtensionParams()),
                Optional.empty(),
                Optional.empty(),
                request.maskRequestHost(),
                resolved.guestDefaults());
        SandboxView view = launcher.launch(creating, resolved.source());
        events.publish(new LifecycleEvent.Created(id, clock.instant(), resolved.template()));
        return view;
    }

    /** Create-time params replace a snapshot's as a whole; an empty object (or none) keeps the snapshot's. */
    static String params(String requested, String inherited) {
        return CustomExtensionParams.isEmpty(requested) ? inherited : requested;
    }
}
