package io.agentenv.cli;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * A transfer's progress bar on stderr, redrawn in place at most every 100 ms:
 * {@code put  12.0 MiB / 40.0 MiB [=========>                    ]  30%  5.0 MiB/s}. Only for transfers of
 * {@link #THRESHOLD} bytes or more and when stderr is a terminal (else {@link #NONE}, which draws nothing). Counts may
 * come from another thread (an upload is read by the HTTP client's).
 */
class Progress {
    /** Smaller transfers take too little time for a bar to be worth drawing. */
    static final long THRESHOLD = 4L << 20;

    static final Progress NONE = new Progress(null, "", 0, System::nanoTime) {
        @Override
        synchronized void add(long bytes) {}

        @Override
        synchronized void finish() {}
    };
    private static final int BAR = 30;
    private static final long REDRAW_NANOS = 100_000_000L;

    private final PrintWriter err;
    private final String label;
    private final long total;
    private final LongSupplier clock;
    private final long started;
    private long done;
    private long drawnAt;
    private boolean drawn;

    Progress(PrintWriter err, String label, long total, LongSupplier clock) {
        this.err = err;
        this.label = label;
        this.total = total;
        this.clock = clock;
        this.started = clock.getAsLong();
    }

    /** A bar for {@code total} bytes when it is large enough and stderr is a terminal; else {@link #NONE}. */
    static Progress of(Stdio stdio, PrintWriter err, String label, long total) {
        return stdio.errIsTerminal() && total >= THRESHOLD ? new Progress(err, label, total, System::nanoTime) : NONE;
    }

    synchronized void add(long bytes) {
        done += bytes;
        long now = clock.getAsLong();
        if (!drawn || now - drawnAt >= REDRAW_NANOS) {
            draw(now);
        }
    }

    /** Draws the final state and ends the line (when anything was drawn). */
    synchronized void finish() {
        if (drawn) {
            draw(clock.getAsLong());
            err.print('\n');
            err.flush();
        }
    }

    private void draw(long now) {
        drawnAt = now;
        drawn = true;
        err.print("\r" + render(label, done, total, now - started) + "\u001b[K");
        err.flush();
    }

    /** One line of the bar: label, bytes done and total, the bar, percent, and the mean rate so far. */
    static String render(String label, long done, long total, long elapsedNanos) {
        double fraction = total <= 0 ? 1 : Math.min(1, (double) done / total);
        int filled = (int) Math.floor(fraction * BAR);
        StringBuilder bar = new StringBuilder(BAR);
        for (int i = 0; i < BAR; i++) {
            bar.append(i < filled ? '=' : i == filled ? '>' : ' ');
        }
        double seconds = elapsedNanos / 1e9;
        String rate = seconds <= 0 ? "-" : size((long) (done / seconds)) + "/s";
        return String.format(
                Locale.ROOT,
                "%s %9s / %-9s [%s] %3d%%  %s",
                label,
                size(done),
                size(total),
                bar,
                (int) Math.floor(fraction * 100),
                rate);
    }

    /** Bytes in B, KiB, MiB or GiB, one decimal above bytes. */
    static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double value = bytes / 1024.0;
        int unit = 0;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }

    /** {@code in}, counting what is read from it. */
    InputStream counting(InputStream in) {
        return new FilterInputStream(in) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) {
                    add(1);
                }
                return b;
            }

            @Override
            public int read(byte[] buffer, int offset, int length) throws IOException {
                int n = super.read(buffer, offset, length);
                if (n > 0) {
                    add(n);
                }
                return n;
            }
        };
    }

    /** {@code out}, counting what is written to it. */
    OutputStream counting(OutputStream out) {
        return new FilterOutputStream(out) {
            @Override
            public void write(int b) throws IOException {
                out.write(b);
                add(1);
            }

            @Override
            public void write(byte[] buffer, int offset, int length) throws IOException {
                out.write(buffer, offset, length);
                add(length);
            }
        };
    }
}
