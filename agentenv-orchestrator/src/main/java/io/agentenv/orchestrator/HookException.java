package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * A custom extension hook call failed. Keeps which hook, how it failed, the HTTP status and the (bounded, printable)
 * response body, so the operation can classify it: {@link Failure#REJECTED} (the extension answered 4xx) is the
 * caller's fault, everything else is the extension's. {@link #getMessage()} names the hook, the status and the body and
 * is shown to API clients; it never contains the extension's URL.
 */
public final class HookException extends Exception {
    /** Longest response body excerpt kept (characters). */
    public static final int MAX_BODY_CHARS = 512;

    /** How the call failed. */
    public enum Failure {
        /** The extension answered 4xx: it refuses this request. */
        REJECTED,
        /** The extension answered something other than 2xx or 4xx (typically 5xx). */
        FAILED,
        /** No answer within the per-call timeout. */
        TIMED_OUT,
        /** The connection could not be made or broke before an answer arrived. */
        UNREACHABLE,
        /** A 2xx answer this server cannot use (not the documented JSON). */
        BAD_RESPONSE
    }

    private final Hook hook;
    private final Failure failure;
    private final OptionalInt status;
    private final Optional<String> body;

    private HookException(
            Hook hook, Failure failure, OptionalInt status, Optional<String> body, String message, Throwable cause) {
        super(message, cause);
        this.hook = hook;
        this.failure = failure;
        this.status = status;
        this.body = body;
    }

    /** The extension answered with a non-2xx status; 4xx is REJECTED, anything else FAILED. */
    public static HookException status(Hook hook, int status, String body) {
        requireNonNull(hook, "hook is null");
        requireNonNull(body, "body is null");
        if (status >= 200 && status < 300) {
            throw new IllegalArgumentException("a 2xx answer is not a failure: " + status);
        }
        String excerpt = excerpt(body);
        Failure failure = status >= 400 && status < 500 ? Failure.REJECTED : Failure.FAILED;
        String verb = failure == Failure.REJECTED ? "rejected the request" : "failed";
        return new HookException(
                hook,
                failure,
                OptionalInt.of(status),
                Optional.of(excerpt),
                "custom extension hook " + hook.wireName() + " " + verb + ": HTTP " + status
                        + (excerpt.isEmpty() ? " (empty body)" : ": " + excerpt),
                null);
    }

    public static HookException timedOut(Hook hook, long timeoutMillis, Throwable cause) {
        requireNonNull(hook, "hook is null");
        return new HookException(
                hook,
                Failure.TIMED_OUT,
                OptionalInt.empty(),
                Optional.empty(),
                "custom extension hook " + hook.wireName() + " did not answer within " + timeoutMillis + " ms",
                cause);
    }

    public static HookException unreachable(Hook hook, Throwable cause) {
        requireNonNull(hook, "hook is null");
        return new HookException(
                hook,
                Failure.UNREACHABLE,
                OptionalInt.empty(),
                Optional.empty(),
                "custom extension hook " + hook.wireName() + " could not be reached (connection failed or closed)",
                cause);
    }

    /** A 2xx answer whose body is not what the contract says; {@code problem} must not contain the URL. */
    public static HookException badResponse(Hook hook, int status, String body, String problem) {
        requireNonNull(hook, "hook is null");
        requireNonNull(problem, "problem is null");
        String excerpt = excerpt(body);
        return new HookException(
                hook,
                Failure.BAD_RESPONSE,
                OptionalInt.of(status),
                Optional.of(excerpt),
                "custom extension hook " + hook.wireName() + " answered HTTP " + status + " with an unusable body ("
                        + problem + ")" + (excerpt.isEmpty() ? "" : ": " + excerpt),
                null);
    }

    public Hook hook() {
        return hook;
    }

    public Failure failure() {
        return failure;
    }

    /** The extension's HTTP status, when it answered. */
    public OptionalInt status() {
        return status;
    }

    /** The response body, cut to {@link #MAX_BODY_CHARS} with control characters replaced, when it answered. */
    public Optional<String> body() {
        return body;
    }

    /** Whether the extension refused the request itself (4xx), as opposed to failing or not answering. */
    public boolean rejected() {
        return failure == Failure.REJECTED;
    }

    /** Bounded and printable: at most {@link #MAX_BODY_CHARS} characters, control characters as '?'. */
    static String excerpt(String body) {
        if (body == null) {
            return "";
        }
        String stripped = body.strip();
        String cut = stripped.length() > MAX_BODY_CHARS ? stripped.substring(0, MAX_BODY_CHARS) + "..." : stripped;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }
}
