package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A template build's COPY step (the SDK's {@code copy} and {@code copyItems}), with the semantics of E2B's builds. The
 * step's arguments are {@code [src, dest, user, mode]} (user and mode may be empty); its files hash names the tar
 * archive the SDK uploaded of what {@code src} matches, with paths relative to the SDK's context directory.
 *
 * <p>{@link #prepare} checks the step, takes the archive from {@link TemplateFiles} (which checked that it stays inside
 * the directory it is extracted in) and writes it into the build sandbox under {@value #TEMP_DIR}; the script it returns
 * runs as root in the WORKDIR so far, extracts the archive into a fresh directory there and places the entry that
 * {@code src} names (its part before the first wildcard: {@code dir/*.js} names {@code dir}, {@code *.txt} everything):
 *
 * <ul>
 *   <li>a file or a symbolic link becomes {@code dest}, or goes into {@code dest} when that ends with '/' (or is a
 *       directory already);
 *   <li>a directory's contents are merged into {@code dest}: directories already there (symbolic links to directories
 *       included) are merged into and keep their owner and mode, other entries there are replaced, and a {@code dest}
 *       that did not exist becomes the directory itself.
 * </ul>
 *
 * <p>A relative {@code dest} is taken from the WORKDIR so far, else from the current user's home; missing parents are
 * made (by root). What is placed is owned by the step's user, else the current USER ({@code name} means that user and
 * its login group, {@code name:group} both), gets the mode when one is given (directories recursively, as E2B does) and
 * keeps the rest of its modes; symbolic links are kept as sent. The archive and the extraction directory are deleted
 * whatever happens. The script is POSIX sh and uses only what GNU and busybox tar, chown, chmod, mv and mkdir share.
 */
final class CopyStep {
    /** Where the archive and its extraction go in the build sandbox. */
    static final String TEMP_DIR = "/tmp";

    private static final Pattern MODE = Pattern.compile("[0-7]{3,4}");
    private static final Pattern OWNER =
            Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})?");

    /** Why a COPY step cannot run; the message names the step, for the build's status. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message, null, false, false);
        }
    }

    private final SandboxGuests guests;
    private final TemplateFiles files;

    CopyStep(SandboxGuests guests, TemplateFiles files) {
        this.guests = requireNonNull(guests, "guests is null");
        this.files = requireNonNull(files, "files is null");
    }

    /** {@code step 3 (COPY src dest)}: how build messages name a COPY step. */
    static String describe(String index, TemplateBuilder.Step step) {
        return "step " + index + " (COPY "
                + String.join(" ", step.args().stream().limit(2).toList()) + ")";
    }

    /**
     * Checks the step, writes its archive into {@code sandbox} and returns the script that places the files, to run as
     * root with the WORKDIR so far as its working directory. {@code info} gets the step's log line. Failure when the
     * arguments are wrong, nothing was uploaded for the files hash, the upload fails its check or the sandbox did not
     * take it.
     *
     * @param currentUser the USER so far
     * @param workdir     the WORKDIR so far
     */
    String prepare(
            SandboxId sandbox,
            BuildRecord build,
            String index,
            TemplateBuilder.Step step,
            String currentUser,
            Optional<String> workdir,
            Consumer<String> info)
            throws Failure {
        requireNonNull(sandbox, "sandbox is null");
        requireNonNull(build, "build is null");
        requireNonNull(currentUser, "currentUser is null");
        requireNonNull(workdir, "workdir is null");
        List<String> args = step.args();
        if (args.size() < 2 || args.get(0).isBlank() || args.get(1).isBlank()) {
            throw new Failure("step " + index + ": COPY needs a source and a destination");
        }
        String what = describe(index, step);
        String src = args.get(0);
        String dest = args.get(1);
        String user = args.size() > 2 && !args.get(2).isBlank() ? args.get(2) : currentUser;
        if (!OWNER.matcher(user).matches()) {
            throw new Failure(what + ": '" + user + "' is not a user name (or user:group)");
        }
        String mode = args.size() > 3 ? args.get(3) : "";
        if (!mode.isEmpty() && !MODE.matcher(mode).matches()) {
            throw new Failure(what + ": mode '" + mode + "' is not an octal mode such as 0644");
        }
        String hash = step.filesHash().orElseThrow(() -> new Failure(what + " has no files hash"));
        if (!TemplateFiles.isHash(hash)) {
            throw new Failure(what + ": files hash " + hash + " is not a SHA-256 in hex");
        }
        String base = sourceBase(src)
                .orElseThrow(() -> new Failure(what + ": the source must be a path inside the context directory"));
        TemplateFiles.Archive archive;
        try {
            archive = files.archive(build.template(), hash)
                    .orElseThrow(() -> new Failure(what + ": no files were uploaded for hash " + hash));
        } catch (AgentEnvException e) {
            throw new Failure(what + ": the files uploaded for hash " + hash + " cannot be used: " + e.getMessage());
        }
        info.accept("COPY " + src + " " + dest + (user.equals(currentUser) ? "" : " (as " + user + ")"));
        String name = TEMP_DIR + "/aenv-copy-" + build.id() + "-" + index;
        String tar = name + ".tar";
        try {
            guests.upload(sandbox, tar, "root", archive.size(), archive.content());
        } catch (AgentEnvException e) {
            throw new Failure(what + ": the files could not be written into the build sandbox: " + e.getMessage());
        }
        return script(
                tar,
                name,
                archive.gzip(),
                base,
                dest,
                user.contains(":") ? user : user + ":",
                mode,
                workdir.isPresent() ? Optional.empty() : Optional.of(currentUser));
    }

    /**
     * The relative path the source names in the archive, as E2B takes it: the part before the last '/' ahead of the
     * first wildcard ({@code *}, {@code ?}, {@code [} or <code>{</code>), or all of it without wildcards; "" for the archive's root. Empty when it is
     * absolute or leaves the context directory.
     */
    static Optional<String> sourceBase(String src) {
        String pattern = src + "/";
        int split = -1;
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == '/') {
                split = i;
            } else if (c == '*' || c == '?' || c == '[' || c == '{') {
                break;
            }
        }
        if (src.startsWith("/")) {
            return Optional.empty();
        }
        List<String> parts = new ArrayList<>();
        for (String part : (split > 0 ? pattern.substring(0, split) : ".").split("/", -1)) {
            if (part.equals("..")) {
                return Optional.empty();
            }
            if (!part.isEmpty() && !part.equals(".")) {
                parts.add(part);
            }
        }
        return Optional.of(String.join("/", parts));
    }

    /**
     * The script (see the class comment). {@code homeOf}: whose home a relative {@code dest} is taken from when there
     * is no WORKDIR (with one, the script runs there and takes it from its working directory).
     */
    static String script(
            String tar,
            String work,
            boolean gzip,
            String base,
            String dest,
            String owner,
            String mode,
            Optional<String> homeOf) {
        StringBuilder s = new StringBuilder();
        s.append("set -e\n");
        s.append("archive=").append(quote(tar)).append('\n');
        s.append("work=").append(quote(work)).append('\n');
        s.append("trap 'rm -rf \"$work\" \"$archive\"' EXIT\n");
        s.append("mkdir -m 700 \"$work\"\n");
        s.append("mkdir -m 755 \"$work/files\"\n");
        s.append("tar -x").append(gzip ? "z" : "").append("f \"$archive\" -C \"$work/files\"\n");
        s.append("src=\"$work/files\"")
                .append(base.isEmpty() ? "" : "/" + quote(base))
                .append('\n');
        s.append("dest=").append(quote(dest)).append('\n');
        s.append("owner=").append(quote(owner)).append('\n');
        s.append("mode=").append(quote(mode)).append('\n');
        s.append("case \"$dest\" in */) into=1 ;; *) into= ;; esac\n");
        s.append("case \"$dest\" in\n/*) ;;\n*)\n");
        if (homeOf.isPresent()) {
            String user = quote(homeOf.get());
            s.append("  from=$(getent passwd ").append(user).append(" 2>/dev/null | cut -d: -f6)\n");
            s.append("  [ -n \"$from\" ] || from=$(awk -F: -v u=")
                    .append(user)
                    .append(" '$1 == u { print $6; exit }' /etc/passwd)\n");
            s.append("  [ -n \"$from\" ] || { echo \"the current user has no home directory\" >&2; exit 1; }\n");
        } else {
            s.append("  from=$(pwd)\n");
        }
        s.append("  dest=\"${from%/}/$dest\" ;;\nesac\n");
        s.append("""
                merge() {
                  for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do
                    if [ ! -e "$e" ] && [ ! -L "$e" ]; then continue; fi
                    t="$2/${e##*/}"
                    if [ -d "$e" ] && [ ! -L "$e" ] && [ -d "$t" ]; then
                      (merge "$e" "$t") || return 1
                    elif [ -d "$t" ] && [ ! -L "$t" ]; then
                      echo "cannot replace directory $t" >&2
                      return 1
                    else
                      rm -f "$t" && mv "$e" "$t" || return 1
                    fi
                  done
                }
                if [ ! -e "$src" ] && [ ! -L "$src" ]; then
                  echo "the uploaded files have no ${src#"$work/files/"}" >&2
                  exit 1
                fi
                if [ -d "$src" ] && [ ! -L "$src" ]; then
                  chown -hR "$owner" "$src"
                  if [ -n "$mode" ]; then chmod -R "$mode" "$src"; fi
                  while [ "$dest" != / ] && [ "${dest%/}" != "$dest" ]; do dest=${dest%/}; done
                  if [ -d "$dest" ]; then
                    merge "$src" "$dest"
                  elif [ -e "$dest" ] || [ -L "$dest" ]; then
                    echo "$dest is not a directory" >&2
                    exit 1
                  else
                    mkdir -p "$(dirname "$dest")"
                    mv "$src" "$dest"
                  fi
                else
                  chown -h "$owner" "$src"
                  if [ -n "$mode" ] && [ ! -L "$src" ]; then chmod "$mode" "$src"; fi
                  if [ -n "$into" ]; then mkdir -p "$dest"; else mkdir -p "$(dirname "$dest")"; fi
                  mv -f "$src" "$dest"
                fi
                """);
        return s.toString();
    }

    private static String quote(String text) {
        return "'" + text.replace("'", "'\\''") + "'";
    }
}
