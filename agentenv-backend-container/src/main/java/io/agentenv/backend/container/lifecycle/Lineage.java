package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What a sandbox's root filesystem and runtime are made of, apart from its own upper dir: the overlay's lower layers
 * (topmost first, ending with the template's rootfs) and the envd distribution bound into it. A restore needs exactly
 * the files the checkpoint saw, so this travels with every paused and snapshot state.
 *
 * <p>A layer is either <em>owned</em> (a relative name such as {@code "0"}: a directory under {@code layers/} of the
 * sandbox dir or artifact dir that holds it; copied or hard-linked along with the state) or <em>shared</em> (an
 * absolute path the backend keeps for as long as it runs: a template's rootfs and its boot layer).
 *
 * @param layers   the lower layers above the template rootfs, topmost first
 * @param template the template's rootfs (the bottom layer)
 * @param envdDir  the envd distribution the sandbox's envd was started from
 */
public record Lineage(List<String> layers, Path template, Path envdDir) {

    private static final Pattern OWNED = Pattern.compile("[0-9]{1,4}");

    public Lineage {
        layers = List.copyOf(layers);
        requireNonNull(template, "template is null");
        requireNonNull(envdDir, "envdDir is null");
        if (!template.isAbsolute() || !envdDir.isAbsolute()) {
            throw new IllegalArgumentException("template and envdDir must be absolute");
        }
        for (String layer : layers) {
            if (!isOwned(layer) && !(layer.startsWith("/") && !layer.contains("..") && !layer.matches(".*[,:\\s].*"))) {
                throw new IllegalArgumentException(
                        "a layer is a number (owned) or an absolute path (shared): " + layer);
            }
        }
        if (layers.size() > 400) {
            throw new IllegalArgumentException("too many layers (" + layers.size() + "); overlayfs allows about 500");
        }
    }

    static boolean isOwned(String layer) {
        return OWNED.matcher(layer).matches();
    }

    /** The overlay's lower dirs, topmost first, with owned layers resolved under {@code layersDir}. */
    List<Path> lowers(Path layersDir) {
        List<Path> lowers = new ArrayList<>();
        for (String layer : layers) {
            lowers.add(isOwned(layer) ? layersDir.resolve(layer) : Path.of(layer));
        }
        lowers.add(template);
        return lowers;
    }

    /** The owned layer names, in order. */
    List<String> owned() {
        return layers.stream().filter(Lineage::isOwned).toList();
    }

    /**
     * The lineage of a capture of a sandbox with this lineage: its upper becomes owned layer "0" on top, and its owned
     * layers are renumbered 1..n (the caller copies them accordingly, old name to new name as returned by
     * {@link #renumbered()}).
     */
    Lineage withCapturedUpper() {
        List<String> next = new ArrayList<>();
        next.add("0");
        int n = 1;
        for (String layer : layers) {
            next.add(isOwned(layer) ? Integer.toString(n++) : layer);
        }
        return new Lineage(next, template, envdDir);
    }

    /** Old owned name to the name {@link #withCapturedUpper()} gives it, in order. */
    List<String[]> renumbered() {
        List<String[]> pairs = new ArrayList<>();
        int n = 1;
        for (String layer : owned()) {
            pairs.add(new String[] {layer, Integer.toString(n++)});
        }
        return pairs;
    }
}
