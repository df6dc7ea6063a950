package io.agentenv.cli;

/**
 * Text from a sandbox made safe for a terminal: names, log lines and error messages can carry control characters
 * (escape sequences that move the cursor, retitle the window or fake output), so every C0/C1 control character and DEL
 * is shown as an escape ({@code \n}, {@code \t}, {@code \x1b}) instead of being written. Command output and file
 * contents are raw bytes and are not touched.
 */
final class Printable {
    private Printable() {}

    static String of(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder safe = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean control = c < 0x20 || (c >= 0x7f && c <= 0x9f);
            if (control && safe == null) {
                safe = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (safe != null) {
                if (!control) {
                    safe.append(c);
                } else if (c == '\n') {
                    safe.append("\\n");
                } else if (c == '\t') {
                    safe.append("\\t");
                } else if (c == '\r') {
                    safe.append("\\r");
                } else {
                    safe.append(String.format("\\x%02x", (int) c));
                }
            }
        }
        return safe == null ? text : safe.toString();
    }
}
