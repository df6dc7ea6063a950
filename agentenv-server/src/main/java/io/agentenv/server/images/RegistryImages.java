package io.agentenv.server.images;

import static java.util.Objects.requireNonNull;

import io.agentenv.images.ImageException;
import io.agentenv.images.ImageRef;
import io.agentenv.images.ImageStore;
import io.agentenv.images.PulledImage;
import io.agentenv.images.RegistryAuth;
import io.agentenv.orchestrator.ImageSource;
import java.util.Optional;
import java.util.function.Consumer;

/** Template builds' images from registries, through the {@link ImageStore} (skopeo and umoci, cached by digest). */
public final class RegistryImages implements ImageSource {
    private final ImageStore store;

    public RegistryImages(ImageStore store) {
        this.store = requireNonNull(store, "store is null");
    }

    @Override
    public Image pull(String reference, Optional<Credentials> credentials, Consumer<String> log) throws PullException {
        ImageRef ref;
        try {
            ref = ImageRef.parse(reference);
        } catch (IllegalArgumentException e) {
            throw new PullException("not an image reference: " + e.getMessage(), e);
        }
        try {
            PulledImage pulled =
                    store.pull(ref, credentials.map(c -> new RegistryAuth(c.username(), c.password())), log);
            return new Image(
                    pulled.manifestDigest(),
                    pulled.rootfs(),
                    pulled.config().env(),
                    pulled.config().workingDir(),
                    pulled.config().user());
        } catch (ImageException e) {
            throw new PullException(e.getMessage(), e);
        }
    }
}
