package io.agentenv.backend.container.runtime;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * CRIU's own account of one dump, from the {@code stats-dump} image it writes into its work dir (two magic words, a
 * little-endian length, then a {@code stats_entry} protobuf message whose field 1 is the {@code dump_stats_entry}, as
 * in CRIU's {@code images/stats.proto}). Times are CRIU's, in microseconds: freezing (the tasks, ~0 when the backend
 * froze the cgroup first), frozen (from frozen to the tasks' kill or release: the whole dump), memory dump (the pages
 * collected) and memory write (the pages written out); pages as CRIU counts them (4 KiB each).
 */
public record CriuStats(
        long freezingMicros,
        long frozenMicros,
        long memdumpMicros,
        long memwriteMicros,
        long pagesScanned,
        long pagesWritten) {

    static final String FILE = "stats-dump";
    private static final int HEADER = 8;

    public CriuStats {
        if (freezingMicros < 0
                || frozenMicros < 0
                || memdumpMicros < 0
                || memwriteMicros < 0
                || pagesScanned < 0
                || pagesWritten < 0) {
            throw new IllegalArgumentException("CRIU stats cannot be negative");
        }
    }

    /** The stats CRIU wrote into its work dir {@code dir} (its images dir when it has no other); empty when none. */
    static Optional<CriuStats> read(Path dir) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(dir.resolve(FILE));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        return Optional.of(parse(bytes));
    }

    static CriuStats parse(byte[] image) throws IOException {
        if (image.length < HEADER + 4) {
            throw new IOException("CRIU stats image too short: " + image.length + " bytes");
        }
        int length =
                ByteBuffer.wrap(image, HEADER, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (length < 0 || length > image.length - HEADER - 4) {
            throw new IOException("CRIU stats image length out of range: " + length);
        }
        CodedInputStream entry = CodedInputStream.newInstance(image, HEADER + 4, length);
        for (int tag = entry.readTag(); tag != 0; tag = entry.readTag()) {
            if (WireFormat.getTagFieldNumber(tag) == 1
                    && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                return dump(CodedInputStream.newInstance(entry.readByteArray()));
            }
            entry.skipField(tag);
        }
        throw new IOException("CRIU stats image has no dump entry");
    }

    private static CriuStats dump(CodedInputStream in) throws IOException {
        long[] field =
                new long[8]; // by field number: 1 freezing, 2 frozen, 3 memdump, 4 memwrite, 5 scanned, 7 written
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            int number = WireFormat.getTagFieldNumber(tag);
            if (number < field.length && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_VARINT) {
                field[number] = in.readUInt64();
            } else {
                in.skipField(tag);
            }
        }
        return new CriuStats(field[1], field[2], field[3], field[4], field[5], field[7]);
    }
}
