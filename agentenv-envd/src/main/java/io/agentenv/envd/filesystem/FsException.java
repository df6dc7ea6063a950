package io.agentenv.envd.filesystem;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/** A failed filesystem operation. The message is meant for the client: it names the path, never internals. */
public final class FsException extends RuntimeException {
    private final FsError error;

    public FsException(FsError error, String message) {
        this(error, message, null);
    }

    public FsException(FsError error, String message, Throwable cause) {
        super(requireNonNull(message, "message is null"), cause);
        this.error = requireNonNull(error, "error is null");
    }

    public FsError error() {
        return error;
    }

    /** Classifies an I/O failure on {@code path}; {@code action} reads like "error reading file". */
    public static FsException of(IOException e, String action, Object path) {
        FsError error = switch (e) {
            case NoSuchFileException _ -> FsError.NOT_FOUND;
            case FileAlreadyExistsException _ -> FsError.ALREADY_EXISTS;
            case AccessDeniedException _ -> FsError.PERMISSION_DENIED;
            case NotDirectoryException _ -> FsError.INVALID_ARGUMENT;
            case DirectoryNotEmptyException _ -> FsError.FAILED_PRECONDITION;
            case FileSystemLoopException _ -> FsError.FAILED_PRECONDITION;
            case FileSystemException fse when isNoSpace(fse) -> FsError.NO_SPACE;
            case FileSystemException fse when isLoop(fse) -> FsError.FAILED_PRECONDITION;
            case FileSystemException fse when isNotDirectory(fse) -> FsError.INVALID_ARGUMENT;
            default -> isNoSpace(e) ? FsError.NO_SPACE : FsError.INTERNAL;
        };
        String reason = switch (error) {
            case NOT_FOUND -> "no such file or directory";
            case ALREADY_EXISTS -> "file exists";
            case PERMISSION_DENIED -> "permission denied";
            case NO_SPACE -> "not enough disk space available";
            case FAILED_PRECONDITION ->
                e instanceof DirectoryNotEmptyException ? "directory not empty" : "too many levels of symbolic links";
            case INVALID_ARGUMENT -> "not a directory";
            default -> "I/O error";
        };
        return new FsException(error, action + " '" + path + "': " + reason, e);
    }

    private static boolean isNoSpace(IOException e) {
        String reason = e instanceof FileSystemException fse ? fse.getReason() : e.getMessage();
        return reason != null && (reason.contains("No space left on device") || reason.contains("Disk quota exceeded"));
    }

    private static boolean isLoop(FileSystemException e) {
        return e.getReason() != null && e.getReason().contains("Too many levels of symbolic links");
    }

    private static boolean isNotDirectory(FileSystemException e) {
        return e.getReason() != null && e.getReason().contains("Not a directory");
    }
}
