package io.agentenv.volumes;

import java.nio.file.Path;

/** The map the registry's tests run on keeps the same contract as the stores on disk. */
class InMemoryVolumeStoreTest extends VolumeStoreContract {
    private InMemoryVolumeStore opened;

    @Override
    protected VolumeStore open(Path dir) {
        if (opened == null) {
            opened = new InMemoryVolumeStore();
        }
        return opened; // a restart finds the same map
    }

    @Override
    protected void close() {
        // nothing held: the map stays for the next open, as a file would
    }
}
