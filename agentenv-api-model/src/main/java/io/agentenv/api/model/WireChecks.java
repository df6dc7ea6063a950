package io.agentenv.api.model;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Checks shared by the request records: each failure names the offending JSON field. */
final class WireChecks {
    private WireChecks() {}

    static String requireText(String value, String field) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(field + " is required");
        }
        return value;
    }

    static Integer nonNegative(Integer value, String field) {
        if (value != null && value < 0) {
            throw new IllegalArgumentException(field + " must be >= 0, was " + value);
        }
        return value;
    }

    static Integer inRange(Integer value, String field, int min, int max) {
        if (value != null && (value < min || value > max)) {
            throw new IllegalArgumentException(field + " must be between " + min + " and " + max + ", was " + value);
        }
        return value;
    }

    /** An immutable copy of a string map, or null when absent; a null key or value is rejected by name. */
    static Map<String, String> stringMap(Map<String, String> map, String field) {
        if (map == null) {
            return null;
        }
        for (Map.Entry<String, String> e : map.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new IllegalArgumentException(
                        field + " must map strings to strings (entry " + e.getKey() + " is null)");
            }
        }
        return Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }

    /** An immutable copy of a JSON object (values may be null), or null when absent. */
    static Map<String, Object> jsonObject(Map<String, Object> map) {
        return map == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }

    static List<String> stringList(List<String> list, String field) {
        if (list == null) {
            return null;
        }
        for (String s : list) {
            if (s == null) {
                throw new IllegalArgumentException(field + " must not contain null");
            }
        }
        return List.copyOf(list);
    }
}
