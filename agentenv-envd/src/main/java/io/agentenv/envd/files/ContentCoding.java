package io.agentenv.envd.files;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** The content codings {@code /files} speaks: none, or gzip. */
enum ContentCoding {
    IDENTITY,
    GZIP;

    /**
     * The coding to answer with for an {@code Accept-Encoding} header (RFC 9110 §12.5.3): the supported coding with
     * the highest q-value, identity when the header is absent or prefers it.
     *
     * @return empty when identity is refused ({@code identity;q=0} or {@code *;q=0}) and gzip is not acceptable either
     */
    static Optional<ContentCoding> negotiate(String acceptEncoding) {
        if (acceptEncoding == null || acceptEncoding.isBlank()) {
            return Optional.of(IDENTITY);
        }
        record Choice(String coding, double quality) {}
        List<Choice> choices = new ArrayList<>();
        for (String item : acceptEncoding.split(",")) {
            String[] parts = item.split(";", -1); // -1: a bare ";" gives an empty coding, not an empty array
            String coding = parts[0].trim().toLowerCase(Locale.ROOT);
            double quality = 1.0;
            for (int i = 1; i < parts.length; i++) {
                String parameter = parts[i].trim();
                if (parameter.regionMatches(true, 0, "q=", 0, 2)) {
                    try {
                        quality = Double.parseDouble(parameter.substring(2).trim());
                    } catch (NumberFormatException e) {
                        quality = 0; // a malformed weight makes the coding unacceptable rather than preferred
                    }
                }
            }
            if (!coding.isEmpty()) {
                choices.add(new Choice(coding, quality));
            }
        }
        boolean identityRefused = choices.stream()
                        .anyMatch(c ->
                                (c.coding().equals("identity") || c.coding().equals("*")) && c.quality() <= 0)
                && choices.stream().noneMatch(c -> c.coding().equals("identity") && c.quality() > 0);
        choices.sort(Comparator.comparingDouble(Choice::quality).reversed());
        for (Choice choice : choices) {
            if (choice.quality() <= 0) {
                continue;
            }
            switch (choice.coding()) {
                case "gzip", "x-gzip" -> {
                    return Optional.of(GZIP);
                }
                case "identity" -> {
                    return Optional.of(IDENTITY);
                }
                case "*" -> {
                    return Optional.of(identityRefused ? GZIP : IDENTITY);
                }
                default -> {
                    // a coding we do not produce (br, deflate, zstd)
                }
            }
        }
        return identityRefused ? Optional.empty() : Optional.of(IDENTITY);
    }

    /** The coding of a request body from its {@code Content-Encoding}; empty when unsupported. */
    static Optional<ContentCoding> ofRequest(String contentEncoding) {
        if (contentEncoding == null || contentEncoding.isBlank()) {
            return Optional.of(IDENTITY);
        }
        return switch (contentEncoding.split(";", 2)[0].trim().toLowerCase(Locale.ROOT)) {
            case "identity" -> Optional.of(IDENTITY);
            case "gzip", "x-gzip" -> Optional.of(GZIP);
            default -> Optional.empty();
        };
    }
}
