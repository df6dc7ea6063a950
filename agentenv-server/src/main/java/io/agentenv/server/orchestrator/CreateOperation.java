package io.agentenv.server.orchestrator;

import io.agentenv.spi.SandboxId;

import java.util.Optional;

import static java.util.Objects.requireNonNull;

/** POST /sandboxes: validate, resolve the template, launch. */
final class CreateOperation {
    private final OperationContext ctx;
    private final Launcher launcher;

    CreateOperation(OperationContext ctx, Launcher launcher) {
        this.ctx = requireNonNull(ctx, "ctx is null");
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
        validate(request, ctx.hooks.enabled());
        TemplateCatalog.Resolved resolved = ctx.templates.resolve(request.template());
        SandboxId id = ctx.ids.newSandboxId();
        SandboxRecord creating = new SandboxRecord(id, resolved.template(), resolved.alias(), SandboxState.CREATING,
                ctx.now(), request.timeout(), Optional.empty(), request.onTimeout(), request.timeoutPauseMode(),
                request.autoResume(), request.secure(), resolved.resources(), request.metadata(),
                TemplateCatalog.merged(resolved.envVars(), request.envVars()), request.network(),
                params(request.customExtensionParams(), resolved.customExtensionParams()), Optional.empty(),
                Optional.empty());
        SandboxView view = launcher.launch(creating, resolved.source());
        ctx.events.publish(new LifecycleEvent.Created(id, ctx.now(), resolved.template()));
        return view;
    }

    /** Create-time params replace a snapshot's as a whole; an empty object (or none) keeps the snapshot's. */
    static String params(String requested, String inherited) {
        return CustomExtensionParams.isEmpty(requested) ? inherited : requested;
    }
}
