package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.Reservation;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
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
    private final VolumeCatalog volumes;

    CreateOperation(
            TemplateCatalog templates,
            SandboxBackendFactory backends,
            Ids ids,
            HookCalls hooks,
            EventBus events,
            Clock clock,
            Launcher launcher,
            String defaultUser,
            VolumeCatalog volumes) {
        this.defaultUser = requireNonNull(defaultUser, "defaultUser is null");
        this.templates = requireNonNull(templates, "templates is null");
        this.backends = requireNonNull(backends, "backends is null");
        this.ids = requireNonNull(ids, "ids is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.launcher = requireNonNull(launcher, "launcher is null");
        this.volumes = requireNonNull(volumes, "volumes is null");
    }

    /** Checks that need no I/O; run on the caller's thread so bad input fails fast. */
    static void validate(CreateSandbox request, boolean extensionConfigured) {
        NetworkRules.validate(request.network());
        VolumeMounts.check(request.volumeMounts());
        if (!extensionConfigured) {
            CustomExtensionParams.requireEmptyWithoutExtension(request.customExtensionParams());
        }
    }

    SandboxView create(CreateSandbox request) {
        validate(request, hooks.enabled());
        TemplateCatalog.Resolved resolved = templates.resolve(request.template());
        if (request.volumeMounts().isEmpty() && resolved.volumes().isEmpty()) {
            return create(request, resolved, List.of());
        }
        // from resolving the volumes until the record that mounts them is stored, none of them can be deleted
        return volumes.keepingVolumes(() -> create(request, resolved, attachments(request, resolved)));
    }

    private SandboxView create(
            CreateSandbox request, TemplateCatalog.Resolved resolved, List<VolumeAttachment> attachments) {
        // a sandbox that mounts volumes boots with them: no ready instance (restored without them) can serve it
        Optional<Reservation> reservation = !attachments.isEmpty()
                ? Optional.empty()
                : switch (resolved.source()) {
                    case LaunchSource.Template(var template) -> backends.reserve(template);
                    // a template build's sandbox starts from a cached layer or a base once: no snapshot is kept warm
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
            return create(
                    request,
                    resolved,
                    attachments,
                    reservation.map(Reservation::id).orElseGet(ids::newSandboxId));
        } finally {
            reservation.ifPresent(Reservation::close); // a no-op once prepare took the instance
        }
    }

    /**
     * The volumes the new sandbox mounts: those the request names, or a snapshot's (its source's mounts, which a
     * sandbox created from it keeps: its checkpoint holds their mounts). A request may name a snapshot's
     * volumes again, never others; every volume must still exist.
     */
    private List<VolumeAttachment> attachments(CreateSandbox request, TemplateCatalog.Resolved resolved) {
        List<VolumeAttachment> asked = VolumeMounts.resolve(request.volumeMounts(), volumes);
        if (resolved.volumes().isEmpty()) {
            return asked;
        }
        if (!asked.isEmpty() && !new HashSet<>(asked).equals(new HashSet<>(resolved.volumes()))) {
            throw AgentEnvException.invalidArgument("template " + resolved.template() + " is a snapshot of a "
                    + "sandbox that mounted volumes " + describe(resolved.volumes()) + "; a sandbox created from it "
                    + "mounts the same ones (leave volumeMounts out or name the same)");
        }
        for (VolumeAttachment volume : resolved.volumes()) {
            if (volumes.find(volume.volumeId()).isEmpty()) {
                throw AgentEnvException.invalidArgument("volume " + volume.name() + " (" + volume.volumeId()
                        + "), which snapshot " + resolved.template() + " mounts at " + volume.path()
                        + ", no longer exists");
            }
        }
        return resolved.volumes();
    }

    private static String describe(List<VolumeAttachment> attachments) {
        StringBuilder text = new StringBuilder();
        for (VolumeAttachment volume : attachments) {
            text.append(text.isEmpty() ? "" : ", ")
                    .append(volume.name())
                    .append(" at ")
                    .append(volume.path())
                    .append(volume.readOnly() ? " (read-only)" : "");
        }
        return text.toString();
    }

    private SandboxView create(
            CreateSandbox request,
            TemplateCatalog.Resolved resolved,
            List<VolumeAttachment> attachments,
            SandboxId id) {
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
                resolved.guestDefaults(),
                attachments);
        SandboxView view = launcher.launch(creating, resolved.source());
        events.publish(new LifecycleEvent.Created(id, clock.instant(), resolved.template()));
        return view;
    }

    /** Create-time params replace a snapshot's as a whole; an empty object (or none) keeps the snapshot's. */
    static String params(String requested, String inherited) {
        return CustomExtensionParams.isEmpty(requested) ? inherited : requested;
    }
}
