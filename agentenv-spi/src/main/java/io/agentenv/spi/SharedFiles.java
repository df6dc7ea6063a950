package io.agentenv.spi;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Storage every node of a cluster reaches, for the backend's own files that its saved states are made on but that
 * belong to no one state: a template's root filesystem, a template's boot layer, the guest agent's distribution. A
 * backend stores such a tree once, under a key it chooses, before a state that needs it can leave the node; a node on
 * another machine that restores the state fetches the tree by that key. The orchestrator stores the states
 * themselves (its own seam); this one is the backend's.
 *
 * <p>A key is 1 to 64 lowercase letters and digits. What is stored under a key never changes (a backend derives keys
 * from what identifies a tree, so a changed tree has a new key). Implementations are thread-safe and check every byte
 * they fetch against what was stored.
 */
public interface SharedFiles {

    /** Whether a tree is stored as {@code key}. */
    boolean contains(String key) throws IOException;

    /** Stores the tree {@code dir} (which does not change meanwhile) as {@code key}. */
    void put(String key, Path dir) throws IOException;

    /**
     * Copies {@code key} to {@code target}, which does not exist: it appears complete or not at all.
     *
     * @throws NoSuchFileException if nothing is stored as {@code key}
     */
    void get(String key, Path target) throws IOException;

    /** Whether {@code key} can name a tree. */
    static boolean isValidKey(String key) {
        return key != null && key.matches("[a-z0-9]{1,64}");
    }
}
