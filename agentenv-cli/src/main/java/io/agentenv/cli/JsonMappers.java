package io.agentenv.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

/**
 * aenv's two Jackson mappers, made when this class is first used: Jackson's class initialisation is a large part of a
 * short command's run, and commands that send and read no JSON ({@code --help}, {@code exec}'s streams) skip it.
 */
final class JsonMappers {
    /** Request and response bodies: compact, and absent fields are left out as the E2B SDK does. */
    static final ObjectMapper WIRE = builder()
            .defaultPropertyInclusion(
                    JsonInclude.Value.construct(JsonInclude.Include.NON_NULL, JsonInclude.Include.NON_NULL))
            .build();

    private JsonMappers() {}

    /** Printing ({@code -o json}): indented. Made on first use, not with {@link #WIRE}. */
    static ObjectMapper print() {
        return Print.MAPPER;
    }

    private static final class Print {
        static final ObjectMapper MAPPER =
                builder().enable(SerializationFeature.INDENT_OUTPUT).build();
    }

    private static JsonMapper.Builder builder() {
        return JsonMapper.builder()
                .addModule(new JavaTimeModule())
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    }
}
