package io.agentenv.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** A plain text table: a header row and left-aligned columns padded to their widest cell; control characters escaped. */
final class Table {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    Table(String... header) {
        this.header = List.of(header);
    }

    Table row(Object... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("expected " + header.size() + " cells, got " + cells.length);
        }
        List<String> row = new ArrayList<>();
        for (Object cell : cells) {
            row.add(cell == null ? "-" : Printable.of(cell.toString()));
        }
        rows.add(row);
        return this;
    }

    void print(PrintWriter out) {
        int[] widths = new int[header.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = header.get(i).length();
            for (List<String> row : rows) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        line(out, header, widths);
        for (List<String> row : rows) {
            line(out, row, widths);
        }
        out.flush();
    }

    private static void line(PrintWriter out, List<String> cells, int[] widths) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            sb.append(cells.get(i));
            if (i < cells.size() - 1) {
                sb.append(" ".repeat(widths[i] - cells.get(i).length() + 2));
            }
        }
        out.println(sb);
    }
}
