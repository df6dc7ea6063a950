package io.agentenv.server.templates;

import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.ErrorKind;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

/**
 * Whether an uploaded tar archive (gzip-compressed or not) can be extracted without writing outside the directory it
 * is extracted in, read here with commons-compress before it reaches a sandbox. Every member must be a relative path
 * without a {@code ..} component and not below a symbolic link of the archive (nor below a name that was one: tar
 * implementations differ on whether a later directory of the same name replaces the link); it must be a file, a
 * directory, a symbolic link (whose target is kept as sent: it is only a link) or a hard link to a file earlier in the
 * archive. Devices, FIFOs and other special members are refused, and so is anything that is not a tar archive.
 */
final class TarCheck {
    private TarCheck() {}

    /** Checks {@code file}; returns whether it is gzip-compressed. INVALID_ARGUMENT with the reason when it fails. */
    static boolean check(Path file) throws IOException {
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file))) {
            raw.mark(2);
            boolean gzip = raw.read() == 0x1f && raw.read() == 0x8b;
            raw.reset();
            try (InputStream in = gzip ? new GZIPInputStream(raw, 64 * 1024) : raw) {
                check(in);
            } catch (IOException | IllegalArgumentException e) {
                throw new AgentEnvException(
                        ErrorKind.INVALID_ARGUMENT,
                        "the upload is not a readable tar archive" + (gzip ? " (gzip)" : ""),
                        e);
            }
            return gzip;
        }
    }

    private static void check(InputStream in) throws IOException {
        TarArchiveInputStream tar = new TarArchiveInputStream(in);
        Set<String> links = new HashSet<>();
        Set<String> files = new HashSet<>();
        int members = 0;
        TarArchiveEntry entry;
        while ((entry = tar.getNextEntry()) != null) {
            members++;
            String name = normalize(entry.getName());
            for (String parent : parents(name)) {
                if (links.contains(parent)) {
                    throw refused(entry.getName(), "is below the symbolic link " + parent);
                }
            }
            if (entry.isDirectory()) {
                continue;
            }
            if (name.isEmpty()) {
                throw refused(entry.getName(), "has no name");
            }
            if (entry.isSymbolicLink()) {
                links.add(name);
            } else if (entry.isLink()) {
                Optional<String> target = clean(entry.getLinkName());
                if (target.isEmpty()) {
                    throw refused(entry.getName(), "is a hard link out of its directory");
                }
                if (!files.contains(target.get())) {
                    throw refused(entry.getName(), "is a hard link to something that is not a file before it");
                }
                files.add(name);
            } else if (entry.getLinkFlag() == TarArchiveEntry.LF_NORMAL
                    || entry.getLinkFlag() == TarArchiveEntry.LF_OLDNORM
                    || entry.getLinkFlag() == TarArchiveEntry.LF_CONTIG) {
                files.add(name);
            } else {
                throw refused(entry.getName(), "is a device, a FIFO or another special file");
            }
        }
        if (members == 0) {
            throw AgentEnvException.invalidArgument("the upload is not a tar archive, or one without members");
        }
    }

    /** The member's path with "." and empty components dropped ("" for the root); refused when it could leave. */
    private static String normalize(String name) {
        if (name.startsWith("/")) {
            throw refused(name, "is an absolute path");
        }
        return clean(name).orElseThrow(() -> refused(name, "leaves its directory"));
    }

    /** The path with "." and empty components dropped; empty when it is absolute or has a ".." component. */
    private static Optional<String> clean(String name) {
        if (name.startsWith("/") || name.indexOf('\0') >= 0) {
            return Optional.empty();
        }
        List<String> parts = new ArrayList<>();
        for (String part : name.split("/", -1)) {
            if (part.equals("..")) {
                return Optional.empty();
            }
            if (!part.isEmpty() && !part.equals(".")) {
                parts.add(part);
            }
        }
        return Optional.of(String.join("/", parts));
    }

    /** a/b/c: a, a/b. */
    private static List<String> parents(String name) {
        List<String> parents = new ArrayList<>();
        int slash = -1;
        while ((slash = name.indexOf('/', slash + 1)) > 0) {
            parents.add(name.substring(0, slash));
        }
        return parents;
    }

    private static AgentEnvException refused(String member, String why) {
        String shown = member.length() > 200 ? member.substring(0, 200) + "..." : member;
        return AgentEnvException.invalidArgument("archive member '" + shown + "' " + why);
    }
}
